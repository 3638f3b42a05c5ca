"""OAuth negative cases, each beside its positive control: PKCE, redirect URIs, codes, refresh
token replay, the resource (audience), scopes at dispatch, CSRF, the login,
registration limits, secrets at rest."""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

import pytest
import valkey
from fastmcp import Client as McpClient

from kenning.access.oauth import CODE_SECONDS, REFRESH_GRACE_SECONDS
from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder
from kenning.store import Store, connect
from tests.mcp_server.conftest import ok, refused
from tests.mcp_server.oauth_kit import PASSWORD, Client, OAuthKit, hidden, pkce, query, start_oauth

LOOPBACK = "http://127.0.0.1:53682/callback"


@pytest.fixture
def kit(engine: Engine, settings: Settings) -> Iterator[OAuthKit]:
    started = start_oauth(
        engine,
        settings,
        users={"alice": "editor", "vera": "viewer"},
        oauth_registrations_per_hour=6,
    )
    yield started
    started.service.stop()


async def _public(kit: OAuthKit, redirect: str = LOOPBACK) -> Client:
    return await kit.register(
        client_name="Test client", redirect_uris=[redirect], token_endpoint_auth_method="none"
    )


def _audit(kit: OAuthKit) -> Any:
    return Store(kit.service.runtime.engine.ctx.store.client, kit.settings.key_prefix).audit


async def test_pkce_is_required_s256_only_and_the_verifier_must_match(kit: OAuthKit) -> None:
    client = await _public(kit)
    verifier, challenge = pkce()
    async with kit.http() as http:
        missing = await http.get(
            kit.authorize_url(client, challenge).replace(f"code_challenge={challenge}", "")
        )
        plain = await http.get(kit.authorize_url(client, challenge, code_challenge_method="plain"))
        short = await http.get(kit.authorize_url(client, "too-short"))
    for reply in (missing, plain, short):
        # the error goes back to the (valid) redirect URI
        assert reply.status_code == 302, reply.text
        assert query(reply.headers["location"])["error"] == "invalid_request"
    code = await kit.code(client, challenge)
    wrong = await kit.token(client, code, pkce()[0])
    assert wrong.status_code == 400  # RFC 6749 §5.2: 400 for every error but invalid_client
    assert wrong.json()["error"] == "invalid_grant"
    # positive control: the same code, the right verifier
    right = await kit.token(client, code, verifier)
    assert right.status_code == 200, right.text


async def test_redirect_uris_match_exactly_except_a_loopback_port(kit: OAuthKit) -> None:
    client = await _public(kit)
    _, challenge = pkce()
    async with kit.http() as http:
        foreign = await http.get(
            kit.authorize_url(client, challenge, redirect_uri="https://evil.example/cb")
        )
        other_path = await http.get(
            kit.authorize_url(client, challenge, redirect_uri="http://127.0.0.1:53682/other")
        )
        other_port = await http.get(
            kit.authorize_url(client, challenge, redirect_uri="http://127.0.0.1:61999/callback")
        )
    for refused_reply in (foreign, other_path):
        assert refused_reply.status_code == 400  # never redirected to an unregistered URI
        assert "not registered" in refused_reply.json()["error_description"]
    assert other_port.status_code == 302
    assert "/oauth/consent?request=" in other_port.headers["location"]
    tokens = await kit.tokens(client, redirect_uri="http://127.0.0.1:61999/callback")
    assert tokens["access_token"].startswith("kna_")
    async with kit.http() as http:  # registration refuses what can never be a safe redirect
        for bad in ("http://evil.example/cb", "javascript:alert(1)", "https://x.example/cb#frag"):
            reply = await http.post(
                "/register", json={"redirect_uris": [bad], "token_endpoint_auth_method": "none"}
            )
            assert reply.status_code == 400, bad
            assert reply.json()["error"] == "invalid_redirect_uri"


async def test_a_code_is_single_use_and_its_reuse_revokes_what_it_produced(kit: OAuthKit) -> None:
    client = await _public(kit)
    verifier, challenge = pkce()
    code = await kit.code(client, challenge)
    first = await kit.token(client, code, verifier)
    assert first.status_code == 200
    access = first.json()["access_token"]
    assert await kit.mcp_status(access) == 200
    again = await kit.token(client, code, verifier)
    assert again.status_code == 400
    assert again.json()["error"] == "invalid_grant"
    assert await kit.mcp_status(access) == 401  # RFC 6749 §4.1.2: the replay revoked the tokens
    assert (
        _audit(kit).recent(limit=5, action="oauth_reuse_detected")[0].details["replayed"] == "code"
    )


async def test_an_expired_code_is_refused(kit: OAuthKit) -> None:
    client = await _public(kit)
    verifier, challenge = pkce()
    fresh = await kit.code(client, challenge)
    kit.clock.advance(CODE_SECONDS - 10)
    # positive control: in time
    assert (await kit.token(client, fresh, verifier)).status_code == 200
    stale = await kit.code(client, challenge)
    kit.clock.advance(CODE_SECONDS + 1)
    reply = await kit.token(client, stale, verifier)
    assert reply.status_code == 400
    assert reply.json()["error"] == "invalid_grant"


async def test_a_replayed_refresh_token_revokes_the_family_after_the_grace_window(
    kit: OAuthKit,
) -> None:
    client = await _public(kit)
    tokens = await kit.tokens(client)
    first = await kit.refresh(client, tokens["refresh_token"])
    assert first.status_code == 200
    # a second tab, within the grace window
    concurrent = await kit.refresh(client, tokens["refresh_token"])
    assert concurrent.status_code == 200, concurrent.text
    newest = first.json()
    assert await kit.mcp_status(newest["access_token"]) == 200  # positive control
    kit.clock.advance(REFRESH_GRACE_SECONDS + 1)
    replay = await kit.refresh(client, tokens["refresh_token"])
    assert (replay.status_code, replay.json()["error"]) == (400, "invalid_grant")
    assert await kit.mcp_status(newest["access_token"]) == 401  # the whole family is gone
    assert (await kit.refresh(client, newest["refresh_token"])).status_code == 400
    event = _audit(kit).recent(limit=5, action="oauth_reuse_detected")[0]
    assert (event.details["replayed"], event.details["client_id"]) == (
        "refresh_token",
        client.client_id,
    )


async def test_a_token_for_another_resource_is_refused(
    kit: OAuthKit, engine: Engine, settings: Settings
) -> None:
    client = await _public(kit)
    tokens = await kit.tokens(client, resource=f"{kit.url}/")  # a trailing slash: the same resource
    assert await kit.mcp_status(tokens["access_token"]) == 200  # positive control
    # same store, another public URL
    other = start_oauth(engine, settings, clock=kit.clock, users={})
    try:
        assert await other.mcp_status(tokens["access_token"]) == 401
        _, challenge = pkce()
        async with kit.http() as http:
            reply = await http.get(kit.authorize_url(client, challenge, resource=other.url))
        assert query(reply.headers["location"])["error"] == "invalid_target"
    finally:
        other.service.stop()


async def test_a_read_grant_cannot_run_a_write_tool(kit: OAuthKit) -> None:
    client = await _public(kit)
    tokens = await kit.tokens(client, scopes=["read"])  # the person unticks write
    assert tokens["scope"] == "read"
    async with McpClient(kit.url, auth=tokens["access_token"]) as mcp:
        assert (await ok(mcp, "version"))["name"] == "kenning"
        text = await refused(
            mcp, "remember", {"content": "deploys run from ops/deploy.sh", "project": "alpha"}
        )
    assert "needs the 'write' scope" in text


async def test_a_viewer_cannot_grant_more_than_read(kit: OAuthKit) -> None:
    client = await _public(kit)
    verifier, challenge = pkce()
    reply = await kit.browse(
        kit.authorize_url(client, challenge, scope="read write"),
        username="vera",
        scopes=["read", "write"],
    )  # a forged form asks for write anyway
    code = query(reply.headers["location"])["code"]
    tokens = await kit.token(client, code, verifier)
    assert tokens.json()["scope"] == "read"


async def test_consent_without_the_csrf_token_grants_nothing(kit: OAuthKit) -> None:
    client = await _public(kit)
    _, challenge = pkce()
    async with kit.http() as http:
        page = await kit.consent_page(http, kit.authorize_url(client, challenge))
        request_id = hidden(page.text, "request")
        for form in (
            {"request": request_id, "action": "approve", "scope": "read"},
            {"request": request_id, "action": "approve", "scope": "read", "csrf": "forged"},
        ):
            forged = await http.post("/oauth/consent", data=form)
            assert forged.status_code == 403
            assert "location" not in forged.headers
        real = await http.post(
            "/oauth/consent",
            data={
                "request": request_id,
                "csrf": hidden(page.text, "csrf"),
                "action": "approve",
                "scope": "read",
            },
        )
    assert real.status_code == 302  # positive control: the request was still open
    assert "code" in query(real.headers["location"])
    assert [e.action for e in _audit(kit).recent(limit=20) if e.action == "oauth_grant"] == [
        "oauth_grant"
    ]


async def test_the_consent_page_shows_the_client_the_redirect_host_and_the_scopes(
    kit: OAuthKit,
) -> None:
    client = await kit.register(
        client_name="Cursor <b>",
        redirect_uris=["cursor://anysphere.cursor-mcp/oauth/callback"],
        token_endpoint_auth_method="none",
    )
    _, challenge = pkce()
    async with kit.http() as http:
        page = await kit.consent_page(
            http, kit.authorize_url(client, challenge, scope="read write")
        )
    assert "Cursor &lt;b&gt;" in page.text  # escaped
    assert "anysphere.cursor-mcp" in page.text
    assert 'value="read"' in page.text
    assert 'value="write"' in page.text
    assert 'value="admin"' not in page.text
    assert page.headers["x-frame-options"] == "DENY"


async def test_a_wrong_password_is_refused_and_audited(kit: OAuthKit) -> None:
    client = await _public(kit)
    _, challenge = pkce()
    async with kit.http() as http:
        start = await http.get(kit.authorize_url(client, challenge))
        page = await http.get(start.headers["location"])
        form = {
            "request": hidden(page.text, "request"),
            "csrf": hidden(page.text, "csrf"),
            "username": "alice",
        }
        wrong = await http.post("/oauth/login", data={**form, "password": PASSWORD + "!"})
        assert wrong.status_code == 401
        assert "wrong username or password" in wrong.text
        assert "set-cookie" not in wrong.headers
        right = await http.post("/oauth/login", data={**form, "password": PASSWORD})
    assert right.status_code == 303  # positive control
    assert "kenning_session=" in right.headers["set-cookie"]
    assert _audit(kit).recent(limit=5, action="login_failed")[0].details["username"] == "alice"


async def test_registration_floods_are_throttled(kit: OAuthKit) -> None:
    for i in range(6):  # positive control: up to the limit, registrations succeed
        await kit.register(
            client_name=f"c{i}", redirect_uris=[LOOPBACK], token_endpoint_auth_method="none"
        )
    async with kit.http() as http:
        flooded = await http.post(
            "/register", json={"redirect_uris": [LOOPBACK], "token_endpoint_auth_method": "none"}
        )
    assert flooded.status_code == 429
    assert flooded.json()["error"] == "rate_limited"
    assert len(_audit(kit).recent(limit=50, action="oauth_register")) == 6
    kit.clock.advance(3600)
    await kit.register(
        client_name="next hour", redirect_uris=[LOOPBACK], token_endpoint_auth_method="none"
    )


async def test_a_registration_key_gates_registration(engine: Engine, settings: Settings) -> None:
    gated = start_oauth(engine, settings, oauth_registration_key="s3cret-registration-key")
    try:
        body = {"redirect_uris": [LOOPBACK], "token_endpoint_auth_method": "none"}
        async with gated.http() as http:
            without = await http.post("/register", json=body)
            wrong = await http.post(
                "/register", json=body, headers={"Authorization": "Bearer nope"}
            )
            right = await http.post(
                "/register", json=body, headers={"Authorization": "Bearer s3cret-registration-key"}
            )
        assert (without.status_code, wrong.status_code) == (401, 401)
        assert right.status_code == 201
    finally:
        gated.service.stop()


async def test_no_code_token_or_client_secret_is_readable_in_a_valkey_dump(
    kit: OAuthKit, client: valkey.Valkey
) -> None:
    confidential = await kit.register(
        client_name="claude.ai", redirect_uris=["https://claude.ai/api/mcp/auth_callback"]
    )
    assert confidential.secret
    verifier, challenge = pkce()
    code = await kit.code(confidential, challenge)
    unredeemed = await kit.code(confidential, challenge)
    tokens = (await kit.token(confidential, code, verifier)).json()
    rotated = (await kit.refresh(confidential, tokens["refresh_token"])).json()
    dump = _dump(client, kit.settings.key_prefix)
    # positive control: the state is there
    assert f"oauth:client:{confidential.client_id}".encode() in dump
    assert b"oauth:access:" in dump
    assert b"oauth:refresh:" in dump
    assert b"oauth:code:" in dump
    for secret in (
        code,
        unredeemed,
        tokens["access_token"],
        tokens["refresh_token"],
        rotated["access_token"],
        rotated["refresh_token"],
        confidential.secret,
    ):
        assert secret.encode() not in dump


def _dump(conn: valkey.Valkey, prefix: str) -> bytes:
    parts: list[bytes] = []
    for key in conn.scan_iter(match=f"{prefix}*"):
        parts.append(key)
        kind = conn.type(key)
        if kind == b"string":
            parts.append(conn.get(key) or b"")  # type: ignore[arg-type]
        elif kind == b"hash":
            values: Any = conn.hgetall(key)
            parts.extend([*values.keys(), *values.values()])
        elif kind == b"set":
            parts.extend(conn.smembers(key))  # type: ignore[arg-type]
    return b" ".join(parts)


async def test_no_oauth_secret_reaches_any_log_even_at_debug(
    kit: OAuthKit, caplog: pytest.LogCaptureFixture
) -> None:
    # at DEBUG everywhere, httpx too (kenning_cli.logs quiets it below DEBUG, and an earlier test
    # of the same process may have run `kenning`)
    with (
        caplog.at_level(logging.DEBUG),
        caplog.at_level(logging.DEBUG, logger="httpx"),
        caplog.at_level(logging.DEBUG, logger="httpcore"),
    ):
        client = await kit.register(
            client_name="claude.ai", redirect_uris=["https://claude.ai/api/mcp/auth_callback"]
        )
        verifier, challenge = pkce()
        code = await kit.code(client, challenge)
        tokens = (await kit.token(client, code, verifier)).json()
        rotated = (await kit.refresh(client, tokens["refresh_token"])).json()
        assert await kit.mcp_status(rotated["access_token"]) == 200
        assert (await kit.revoke(client, rotated["refresh_token"])).status_code == 200
        assert await kit.mcp_status(rotated["access_token"]) == 401
    # httpcore's DEBUG trace is the test's own browser printing the response headers it received
    # (the redirect that carries the code to the client): client-side, and
    # no Kenning process runs it
    records = [r for r in caplog.records if not r.name.startswith("httpcore")]
    logged = "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in records)
    assert "httpx" in {r.name for r in records}  # positive control: the requests were logged
    assert "/token" in logged
    for secret in (
        code,
        tokens["access_token"],
        tokens["refresh_token"],
        rotated["access_token"],
        rotated["refresh_token"],
        str(client.secret),
        PASSWORD,
    ):
        assert secret not in logged


async def test_a_disabled_accounts_tokens_stop_at_their_next_use(kit: OAuthKit) -> None:
    client = await _public(kit)
    tokens = await kit.tokens(client)
    assert await kit.mcp_status(tokens["access_token"]) == 200  # positive control
    kit.accounts.disable("alice", actor="pytest")
    assert await kit.mcp_status(tokens["access_token"]) == 401
    assert (await kit.refresh(client, tokens["refresh_token"])).status_code == 400
    kit.accounts.enable("alice", actor="pytest")
    assert await kit.mcp_status(tokens["access_token"]) == 200


async def test_during_an_outage_a_recent_oauth_token_hears_about_it_instead_of_a_401(
    doomed_valkey: EmbeddedValkey, embedder: Embedder
) -> None:
    settings = doomed_valkey.settings
    engine = Engine.open(settings, connect(settings), embedder, clock=ManualClock(time.time()))
    kit = start_oauth(engine, settings)
    try:
        client = await _public(kit)
        seen = await kit.tokens(client)
        unseen = await kit.tokens(client)
        async with McpClient(kit.url, auth=seen["access_token"]) as mcp:
            # positive control: verified, runs
            assert (await ok(mcp, "version"))["name"] == "kenning"
            doomed_valkey.stop()
            message = await refused(mcp, "version")  # needs no Valkey, yet must not run unverified
        assert message.startswith("backend_unavailable: memory could NOT be checked"), message
        assert await kit.mcp_status(unseen["access_token"]) == 401  # never verified by this process
    finally:
        kit.service.stop()
