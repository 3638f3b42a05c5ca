"""OAuth 2.1 end to end over real HTTP: discovery, the MCP SDK's own OAuth client (registration, the
browser's login and consent, PKCE, token) calling tools, refresh, revocation; the three clients'
registrations; bearer tokens beside OAuth; and `kenning oauth`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastmcp import Client as McpClient
from mcp.client.auth import OAuthClientProvider
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from pydantic import AnyUrl

from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.store import Store
from kenning_cli.main import main
from tests.mcp_server.conftest import ok, refused
from tests.mcp_server.oauth_kit import Memory, OAuthKit, pkce, query, start_oauth

CLAUDE_AI = "https://claude.ai/api/mcp/auth_callback"
CURSOR = "cursor://anysphere.cursor-mcp/oauth/callback"


@pytest.fixture
def kit(engine: Engine, settings: Settings) -> Iterator[OAuthKit]:
    started = start_oauth(engine, settings, users={"alice": "editor", "vera": "viewer"})
    yield started
    started.service.stop()


async def test_discovery_documents_and_the_401_challenge(kit: OAuthKit) -> None:
    async with kit.http() as http:
        unauthenticated = await http.post("/mcp", json={})
        resource = await http.get("/.well-known/oauth-protected-resource/mcp")
        server = await http.get("/.well-known/oauth-authorization-server")
    assert unauthenticated.status_code == 401
    challenge = unauthenticated.headers["www-authenticate"]
    assert f'resource_metadata="{kit.base}/.well-known/oauth-protected-resource/mcp"' in challenge
    assert resource.status_code == 200
    assert resource.json()["resource"] == kit.url
    assert resource.json()["authorization_servers"] == [kit.base]
    meta = server.json()
    assert meta["issuer"] == kit.base
    assert meta["code_challenge_methods_supported"] == ["S256"]
    assert "none" in meta["token_endpoint_auth_methods_supported"]
    assert meta["scopes_supported"] == ["read", "write", "admin", "offline_access"]
    assert (meta["registration_endpoint"], meta["revocation_endpoint"]) == (
        f"{kit.base}/register",
        f"{kit.base}/revoke",
    )


async def test_the_sdk_client_connects_calls_refreshes_and_is_refused_after_revocation(
    kit: OAuthKit,
) -> None:
    storage = Memory()
    landed: dict[str, str] = {}

    async def redirect(url: str) -> None:  # the person's browser: log in, allow what is shown
        reply = await kit.browse(url)
        assert reply.status_code == 302, reply.text
        landed.update(query(reply.headers["location"]))

    async def callback() -> AuthorizationCodeResult:
        return AuthorizationCodeResult(code=landed["code"], state=landed["state"])

    provider = OAuthClientProvider(
        kit.url,
        OAuthClientMetadata(
            client_name="SDK test client",
            redirect_uris=[AnyUrl("http://127.0.0.1:45123/callback")],
            token_endpoint_auth_method="none",
        ),
        storage,
        redirect,
        callback,
    )
    async with McpClient(kit.url, auth=provider) as client:
        stored = await ok(
            client,
            "remember",
            {"content": "The deploy script lives in ops/deploy.sh", "project": "alpha"},
        )
        assert stored["status"] == "stored"
    assert storage.tokens is not None
    assert storage.client is not None
    # editor: no admin
    assert set(str(storage.tokens.scope).split()) == {"read", "write", "offline_access"}
    events = Store(
        kit.service.runtime.engine.ctx.store.client, kit.settings.key_prefix
    ).audit.recent(limit=50)
    assert any(e.actor == "user:alice" and e.key == stored["key"] for e in events)
    client_info = storage.client
    refreshed = await _refresh(kit, client_info.client_id, str(storage.tokens.refresh_token))
    assert refreshed.status_code == 200, refreshed.text
    new = refreshed.json()
    assert new["refresh_token"] != storage.tokens.refresh_token
    async with McpClient(kit.url, auth=new["access_token"]) as client:
        assert (await ok(client, "version"))["name"] == "kenning"
    async with kit.http() as http:
        revoked = await http.post(
            "/revoke", data={"token": new["refresh_token"], "client_id": client_info.client_id}
        )
    assert revoked.status_code == 200
    assert await kit.mcp_status(new["access_token"]) == 401  # the whole family went with it
    assert (await _refresh(kit, client_info.client_id, new["refresh_token"])).status_code == 400
    actions = [
        e.action
        for e in Store(
            kit.service.runtime.engine.ctx.store.client, kit.settings.key_prefix
        ).audit.recent(limit=50)
    ]
    for action in ("oauth_register", "oauth_grant", "oauth_token", "oauth_refresh", "oauth_revoke"):
        assert action in actions, action


async def _refresh(kit: OAuthKit, client_id: str, refresh_token: str) -> httpx.Response:
    async with kit.http() as http:
        return await http.post(
            "/token",
            data={
                "grant_type": "refresh_token",
                "refresh_token": refresh_token,
                "client_id": client_id,
            },
        )


async def test_claude_ai_registers_without_scope_and_gets_the_defaults(kit: OAuthKit) -> None:
    client = await kit.register(client_name="claude.ai", redirect_uris=[CLAUDE_AI])
    assert client.info["scope"] == "read write offline_access"
    assert client.secret  # claude.ai's default method is client_secret_post
    tokens = await kit.tokens(client)  # authorize without a scope parameter
    assert tokens["scope"] == "read write offline_access"
    assert tokens["refresh_token"].startswith("knr_")
    assert await kit.mcp_status(tokens["access_token"]) == 200
    wrong = await kit.refresh(
        client.__class__(client.client_id, client.redirect_uri, "not-the-secret"),
        tokens["refresh_token"],
    )
    assert wrong.status_code == 401  # a confidential client must present its secret
    # positive control
    assert (await kit.refresh(client, tokens["refresh_token"])).status_code == 200


async def test_claude_code_uses_a_loopback_ephemeral_port_and_offline_access(kit: OAuthKit) -> None:
    client = await kit.register(
        client_name="Claude Code",
        redirect_uris=["http://localhost:53682/callback"],
        token_endpoint_auth_method="none",
        scope="read write offline_access",
    )
    tokens = await kit.tokens(
        client, redirect_uri="http://localhost:61111/callback", scope="read write offline_access"
    )
    assert tokens["scope"] == "read write offline_access"
    assert "refresh_token" in tokens
    assert await kit.mcp_status(tokens["access_token"]) == 200


async def test_cursor_registers_its_custom_scheme_with_no_client_secret(kit: OAuthKit) -> None:
    client = await kit.register(
        client_name="Cursor", redirect_uris=[CURSOR], token_endpoint_auth_method="none"
    )
    assert client.secret is None
    verifier, challenge = pkce()
    code = await kit.code(client, challenge, scope="read")
    reply = await kit.token(client, code, verifier)
    assert reply.status_code == 200, reply.text
    assert reply.json()["scope"] == "read"
    assert await kit.mcp_status(reply.json()["access_token"]) == 200


async def test_a_scope_string_with_stray_spaces_parses(kit: OAuthKit) -> None:
    client = await kit.register(
        client_name="spacey", redirect_uris=[CURSOR], token_endpoint_auth_method="none"
    )
    tokens = await kit.tokens(client, scope="  read   write ")
    assert tokens["scope"] == "read write"


async def test_bearer_tokens_keep_working_beside_oauth(kit: OAuthKit) -> None:
    engine = kit.service.runtime.engine
    _, secret = engine.tokens.create("laptop", "read", actor="pytest")
    async with McpClient(kit.url, auth=secret) as client:
        assert (await ok(client, "version"))["name"] == "kenning"
        assert "token 'laptop'" in await refused(
            client, "remember", {"content": "x y z", "project": "alpha"}
        )


async def test_the_cli_lists_clients_and_grants_and_revokes_a_client(
    kit: OAuthKit,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    client = await kit.register(
        client_name="Cursor", redirect_uris=[CURSOR], token_endpoint_auth_method="none"
    )
    tokens = await kit.tokens(client, scope="read")
    assert await kit.mcp_status(tokens["access_token"]) == 200  # positive control
    monkeypatch.chdir(tmp_path)
    for name, value in (
        ("DATA_DIR", str(kit.settings.data_dir)),
        ("VALKEY_PORT", str(kit.settings.valkey_port)),
        ("KEY_PREFIX", kit.settings.key_prefix),
    ):
        monkeypatch.setenv(f"KENNING_{name}", value)
    assert main(["oauth", "clients"]) == 0
    assert f"{client.client_id}\tCursor\tnone" in capsys.readouterr().out
    assert main(["oauth", "grants"]) == 0
    assert f"{client.client_id}\tCursor\talice\tread" in capsys.readouterr().out
    assert main(["oauth", "revoke", client.client_id]) == 0
    assert "its tokens no longer work" in capsys.readouterr().out
    assert await kit.mcp_status(tokens["access_token"]) == 401
    assert main(["oauth", "clients"]) == 0
    assert client.client_id not in capsys.readouterr().out
    assert main(["oauth", "revoke", client.client_id]) == 1
