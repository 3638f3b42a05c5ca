"""Helpers for the OAuth tests: a server with OAuth on a free port, a browser made of httpx that
logs in and consents, and the raw protocol steps (register, authorize, token, refresh, revoke).

    kit = start_oauth(engine, settings)          # ManualClock at the real time; kit.clock.advance(...)
    client = await kit.register(redirect_uris=["http://127.0.0.1:9999/cb"], token_endpoint_auth_method="none")
    code = await kit.code(client, scope="read write")   # the browser steps, approving
    tokens = await kit.token(client, code)
"""  # noqa: E501

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
from argon2 import PasswordHasher
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from kenning.access.accounts import Accounts
from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.store import Store
from mcp_server.service import McpService
from tests.conftest import free_port, make_settings

PASSWORD = "correct horse battery"
# hashing cost is not under test
FAST_HASH = PasswordHasher(time_cost=1, memory_cost=8192, parallelism=1)


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")
    )
    return verifier, challenge


def hidden(page: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', page)
    assert found, f"no hidden field {name!r} in {page[:300]}"
    return found.group(1)


def query(location: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}


class Memory:
    """The MCP SDK's token storage (its ``TokenStorage`` protocol), in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@dataclass
class Client:
    client_id: str
    redirect_uri: str
    secret: str | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def auth(self) -> dict[str, str]:
        return {
            "client_id": self.client_id,
            **({"client_secret": self.secret} if self.secret else {}),
        }


@dataclass
class OAuthKit:
    service: McpService
    settings: Settings
    clock: ManualClock
    accounts: Accounts

    @property
    def base(self) -> str:
        return str(self.settings.mcp_public_url)

    @property
    def url(self) -> str:
        return f"{self.base}/mcp"

    def http(self, **kwargs: Any) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.base, follow_redirects=False, timeout=30, **kwargs)

    async def register(self, **metadata: Any) -> Client:
        async with self.http() as http:
            reply = await http.post("/register", json=metadata)
        assert reply.status_code == 201, reply.text
        body = reply.json()
        return Client(
            body["client_id"], str(metadata["redirect_uris"][0]), body.get("client_secret"), body
        )

    def authorize_url(
        self, client: Client, challenge: str, *, redirect_uri: str | None = None, **extra: str
    ) -> str:
        params = {
            "response_type": "code",
            "client_id": client.client_id,
            "state": "st-1",
            "redirect_uri": redirect_uri or client.redirect_uri,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            **extra,
        }
        return (
            f"{self.base}/authorize?{urlencode({k: v for k, v in params.items() if v is not None})}"
        )

    async def consent_page(
        self, http: httpx.AsyncClient, url: str, username: str = "alice"
    ) -> httpx.Response:
        """/authorize -> login form -> logged in -> the consent page."""
        reply = await http.get(url)
        assert reply.status_code == 302, reply.text
        assert "/oauth/consent?request=" in reply.headers["location"]
        page = await http.get(reply.headers["location"])
        if 'name="password"' in page.text:
            login = await http.post(
                "/oauth/login",
                data={
                    "request": hidden(page.text, "request"),
                    "csrf": hidden(page.text, "csrf"),
                    "username": username,
                    "password": PASSWORD,
                },
            )
            assert login.status_code == 303, login.text
            page = await http.get(login.headers["location"])
        assert page.status_code == 200, page.text
        assert "wants to use your Kenning memory" in page.text
        return page

    async def browse(
        self,
        url: str,
        *,
        scopes: list[str] | None = None,
        username: str = "alice",
        action: str = "approve",
    ) -> httpx.Response:
        """What a person does in the browser: log in, then allow (ticking
        ``scopes``, default: as shown)."""
        async with self.http() as http:
            page = await self.consent_page(http, url, username)
            chosen = (
                scopes
                if scopes is not None
                else re.findall(r'name="scope" value="([^"]+)"\s+checked', page.text)
            )
            form = {
                "request": hidden(page.text, "request"),
                "csrf": hidden(page.text, "csrf"),
                "action": action,
                "scope": chosen,
            }
            return await http.post("/oauth/consent", data=form)

    async def code(self, client: Client, challenge: str, **extra: Any) -> str:
        scopes = extra.pop("scopes", None)
        reply = await self.browse(self.authorize_url(client, challenge, **extra), scopes=scopes)
        assert reply.status_code == 302, reply.text
        params = query(reply.headers["location"])
        assert params["state"] == "st-1"
        return params["code"]

    async def token(
        self, client: Client, code: str, verifier: str, *, redirect_uri: str | None = None
    ) -> httpx.Response:
        async with self.http() as http:
            return await http.post(
                "/token",
                data={
                    "grant_type": "authorization_code",
                    "code": code,
                    "code_verifier": verifier,
                    "redirect_uri": redirect_uri or client.redirect_uri,
                    **client.auth(),
                },
            )

    async def tokens(self, client: Client, **extra: Any) -> dict[str, Any]:
        """A whole authorization: code, then tokens (which must be issued)."""
        verifier, challenge = pkce()
        code = await self.code(client, challenge, **extra)
        reply = await self.token(client, code, verifier, redirect_uri=extra.get("redirect_uri"))
        assert reply.status_code == 200, reply.text
        body: dict[str, Any] = reply.json()
        return body

    async def refresh(self, client: Client, refresh_token: str) -> httpx.Response:
        async with self.http() as http:
            return await http.post(
                "/token",
                data={
                    "grant_type": "refresh_token",
                    "refresh_token": refresh_token,
                    **client.auth(),
                },
            )

    async def revoke(self, client: Client, token: str) -> httpx.Response:
        async with self.http() as http:
            return await http.post("/revoke", data={"token": token, **client.auth()})

    async def mcp_status(self, access_token: str) -> int:
        """The HTTP status of an MCP initialize sent with ``access_token``."""
        body = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "probe", "version": "0"},
            },
        }
        async with self.http() as http:
            reply = await http.post(
                "/mcp",
                json=body,
                headers={
                    "Authorization": f"Bearer {access_token}",
                    "Accept": "application/json, text/event-stream",
                },
            )
        return reply.status_code


def oauth_settings(settings: Settings, **overrides: Any) -> Settings:
    port = free_port()
    values: dict[str, Any] = {
        "key_prefix": settings.key_prefix,
        "mcp_port": port,
        "oauth": True,
        "mcp_public_url": f"http://127.0.0.1:{port}",
        "mcp_profile": "all",  # every tool shown, as in conftest.mcp_settings
    }
    values.update(overrides)
    return make_settings(settings.data_dir, settings.valkey_port, **values)


def start_oauth(
    engine: Engine,
    settings: Settings,
    *,
    clock: ManualClock | None = None,
    users: dict[str, str] | None = None,
    **overrides: Any,
) -> OAuthKit:
    """A started MCP server with OAuth; ``users`` (username -> role,
    default alice: editor) exist."""
    config = oauth_settings(settings, **overrides)
    clock = clock or ManualClock(time.time())
    service = McpService(engine, config, oauth_clock=clock)
    accounts = Accounts(Store(engine.ctx.store.client, config.key_prefix), clock, hasher=FAST_HASH)
    for username, role in ({"alice": "editor"} if users is None else users).items():
        accounts.create(username, PASSWORD, role, actor="pytest")
    service.start()
    return OAuthKit(service=service, settings=config, clock=clock, accounts=accounts)
