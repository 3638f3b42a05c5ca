"""The token cache and the outage grace: a revoked token stops within the documented window while
Valkey answers, and a token let through during an outage runs nothing. The clock
is stepped, never slept on."""

from __future__ import annotations

import logging

import httpx
import pytest
from fastmcp import Client
from mcp import MCPError

from kenning.access.tokens import Tokens
from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder
from kenning.store import Store, connect
from mcp_server.auth import CACHE_SECONDS, OUTAGE_GRACE_SECONDS, UNVERIFIED, TokenAuth
from tests.mcp_server.conftest import SteppedClock, mcp_settings, ok, refused, start_harness

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _tokens(settings: Settings) -> Tokens:
    return Tokens(Store(connect(settings), settings.key_prefix), ManualClock(1_790_000_000.0))


async def test_a_revoked_token_stops_once_the_cache_window_passes(engine: Engine) -> None:
    _, secret = engine.tokens.create("soon-revoked", "write", actor="pytest")
    clock = SteppedClock()
    verifier = TokenAuth(engine.tokens, clock=clock)
    first = await verifier.verify_token(secret)
    assert first is not None
    assert (first.client_id, first.scopes, first.claims[UNVERIFIED]) == (
        "soon-revoked",
        ["read", "write"],
        False,
    )
    engine.tokens.revoke("soon-revoked", actor="pytest")
    clock.now += CACHE_SECONDS - 1
    assert await verifier.verify_token(secret) is not None  # the documented revocation delay
    clock.now += 2
    assert await verifier.verify_token(secret) is None
    clock.now += 1
    assert await verifier.verify_token(secret) is None  # forgotten by the cache, not re-admitted


async def test_during_an_outage_recent_tokens_pass_unverified_without_scopes(
    doomed_valkey: EmbeddedValkey,
) -> None:
    tokens = _tokens(doomed_valkey.settings)
    secrets = {
        name: tokens.create(name, "admin", actor="pytest")[1]
        for name in ("stale", "recent", "revoked")
    }
    _, unseen = tokens.create("unseen", "admin", actor="pytest")
    clock = SteppedClock()
    verifier = TokenAuth(tokens, clock=clock)
    assert await verifier.verify_token(secrets["stale"]) is not None
    clock.now += OUTAGE_GRACE_SECONDS - 5
    for name in ("recent", "revoked"):
        assert await verifier.verify_token(secrets[name]) is not None  # positive controls
    tokens.revoke("revoked", actor="pytest")
    doomed_valkey.stop()
    clock.now += CACHE_SECONDS
    # verified longer ago than the grace
    assert await verifier.verify_token(secrets["stale"]) is None
    assert await verifier.verify_token(unseen) is None  # never verified by this process
    # Valkey cannot say "revoked" now: admitted, but with nothing to run
    for name in ("recent", "revoked"):
        token = await verifier.verify_token(secrets[name])
        assert token is not None, name
        assert (token.client_id, token.scopes, token.claims[UNVERIFIED]) == (name, [], True)


async def test_an_unverified_token_runs_no_tool_and_hears_about_the_outage(
    doomed_valkey: EmbeddedValkey, embedder: Embedder
) -> None:
    settings = doomed_valkey.settings
    engine = Engine.open(settings, connect(settings), embedder, clock=ManualClock(1_790_000_000.0))
    clock = SteppedClock()
    harness = start_harness(engine, mcp_settings(settings), auth_clock=clock)
    try:
        async with harness.client("read") as client:
            # positive control: verified, runs
            assert (await ok(client, "version"))["name"] == "kenning"
            doomed_valkey.stop()
            clock.now += CACHE_SECONDS + 1
            # needs no Valkey, yet must not run unverified
            message = await refused(client, "version")
        assert message.startswith(
            "backend_unavailable: memory could NOT be checked -- token 'test-read' "
            "could not be checked"
        ), message
        clock.now += OUTAGE_GRACE_SECONDS
        async with httpx.AsyncClient(base_url=harness.base) as http:
            late = await http.post(
                "/mcp",
                json=INITIALIZE,
                headers={**HEADERS, "Authorization": f"Bearer {harness.secrets['read']}"},
            )
        assert late.status_code == 401
    finally:
        harness.service.stop()


async def test_over_http_a_revoked_token_is_refused_after_the_cache_window(
    engine: Engine, settings: Settings
) -> None:
    clock = SteppedClock()
    harness = start_harness(engine, mcp_settings(settings), auth_clock=clock)
    _, secret = engine.tokens.create("revoked-later", "write", actor="pytest")
    try:
        async with Client(harness.url, auth=secret) as client:
            stored = await ok(
                client, "remember", {"content": "Written before the token was revoked"}
            )
            engine.tokens.revoke("revoked-later", actor="pytest")
            clock.now += CACHE_SECONDS + 1
            with pytest.raises(MCPError, match="error response"):  # the 401 ends the session
                await client.call_tool(
                    "remember", {"content": "Written after the token was revoked"}
                )
    finally:
        harness.service.stop()
    assert engine.memories.get(stored["key"]).actor == "revoked-later"
    assert [e.action for e in engine.store.audit.recent(limit=20) if e.action == "remember"] == [
        "remember"
    ]


async def test_no_secret_reaches_any_log_even_at_debug(
    engine: Engine, settings: Settings, caplog: pytest.LogCaptureFixture
) -> None:
    harness = start_harness(engine, mcp_settings(settings))
    try:
        # httpx too: kenning_cli.logs quiets it below DEBUG, and an earlier test may have run it
        with (
            caplog.at_level(logging.DEBUG),
            caplog.at_level(logging.DEBUG, logger="httpx"),
            caplog.at_level(logging.DEBUG, logger="httpcore"),
        ):
            async with harness.client("write") as client:
                await ok(client, "remember", {"content": "Secrets stay out of the logs"})
                await refused(client, "delete_project", {"project": "x"})
            async with harness.client("read") as reader:
                await refused(reader, "remember", {"content": "refused by scope"})
            async with httpx.AsyncClient(base_url=harness.base) as http:
                wrong = harness.secrets["admin"][:-2] + "xx"
                await http.post(
                    "/mcp", json=INITIALIZE, headers={**HEADERS, "Authorization": f"Bearer {wrong}"}
                )
    finally:
        harness.service.stop()
    logged = "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    # positive control: client and server logs were captured, the refused wrong token included
    assert {"httpx", "fastmcp.server.auth.middleware"} <= {r.name for r in caplog.records}
    for secret in (*harness.secrets.values(), wrong):
        assert secret not in logged
        assert secret.removeprefix("kn_") not in logged


async def test_a_401_says_how_to_get_a_token_and_never_to_re_register(
    engine: Engine, settings: Settings
) -> None:
    harness = start_harness(engine, mcp_settings(settings))
    try:
        async with httpx.AsyncClient(base_url=harness.base) as http:
            good = await http.post(
                "/mcp",
                json=INITIALIZE,
                headers={**HEADERS, "Authorization": f"Bearer {harness.secrets['read']}"},
            )
            missing = await http.post("/mcp", json=INITIALIZE, headers=HEADERS)
            wrong = await http.post(
                "/mcp", json=INITIALIZE, headers={**HEADERS, "Authorization": "Bearer nope"}
            )
    finally:
        harness.service.stop()
    assert good.status_code == 200  # positive control: a known token gets in
    assert (missing.status_code, missing.json()["error"]) == (401, "missing_token")
    assert (wrong.status_code, wrong.json()["error"]) == (401, "invalid_token")
    for response in (missing, wrong):
        assert "kenning token create" in response.json()["error_description"]
        assert "register" not in response.text + response.headers["www-authenticate"]
        assert response.headers["www-authenticate"].startswith("Bearer")
    assert 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert "kenning token create" in wrong.headers["www-authenticate"]
