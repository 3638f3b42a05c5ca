"""Third-party MCP clients connect to Kenning, each a real implementation and none of them ours:
the official Python SDK's OAuth client with its browser step in Chromium; `mcp-remote` (what Claude
Desktop users run for a remote server) as a stdio proxy whose $BROWSER is scripts/oauth_login.py;
the TypeScript SDK's client with its OAuth provider; Claude Code's CLI with a bearer token. Each
lists the tools, stores a memory and recalls it.

The node packages are pinned in tests/clients (package.json, package-lock.json); `.ci/run` installs
them with `npm ci --prefix tests/clients`. Without them these tests fail, saying so."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from mcp_types import CallToolResult
from playwright.async_api import Browser
from pydantic import AnyUrl

from kenning.core.settings import Settings
from kenning.engine import Engine
from tests.mcp_server.browser import (
    LocalSite,
    browser,  # noqa: F401 (the fixture)
    chromium_context,
    connect,
    serving,
)
from tests.mcp_server.oauth_kit import Memory, OAuthKit, start_oauth

FACT = "The staging database is rebuilt from the nightly snapshot at 03:00 UTC"
QUESTION = "when is the staging database rebuilt?"


@pytest.fixture
def kit(engine: Engine, settings: Settings) -> Iterator[OAuthKit]:
    started = start_oauth(engine, settings)
    yield started
    started.service.stop()


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict), result.content
    return result.structured_content


async def remember_then_recall(session: ClientSession, project: str) -> str:
    """The tools are listed, a memory stored, and the recall finds it first; its key."""
    tools = {tool.name for tool in (await session.list_tools()).tools}
    assert {"remember", "recall"} <= tools
    stored = structured(await session.call_tool("remember", {"content": FACT, "project": project}))
    assert stored["status"] == "stored"
    found = structured(
        await session.call_tool("recall", {"query": QUESTION, "projects": [project]})
    )
    assert found["results"][0]["key"] == stored["key"]
    assert found["results"][0]["content"] == FACT
    return str(stored["key"])


async def test_the_python_sdk_oauth_client_connects_through_chromium(
    browser: Browser,  # noqa: F811
    kit: OAuthKit,
) -> None:
    storage = Memory()
    with serving(LocalSite()) as callback:
        async with chromium_context(browser) as context:

            async def redirect(url: str) -> None:  # the person's browser: log in and allow
                await connect(context, url, callback)

            async def take_code() -> AuthorizationCodeResult:  # the client's loopback listener
                hit = await callback.wait("/callback")
                return AuthorizationCodeResult(code=hit.query["code"], state=hit.query["state"])

            provider = OAuthClientProvider(
                kit.url,
                OAuthClientMetadata(
                    client_name="MCP Python SDK",
                    redirect_uris=[AnyUrl(f"{callback.url}/callback")],
                    token_endpoint_auth_method="none",
                ),
                storage,
                redirect,
                take_code,
            )
            async with (
                httpx2.AsyncClient(auth=provider, timeout=60) as http,
                streamable_http_client(kit.url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await remember_then_recall(session, "python-sdk")
    # discovery, registration, PKCE and the token exchange were the SDK's own
    assert storage.client is not None
    assert storage.client.client_name == "MCP Python SDK"
    assert storage.tokens is not None
    assert set(str(storage.tokens.scope).split()) == {"read", "write", "offline_access"}
    assert [h.path for h in callback.hits if h.path != "/favicon.ico"] == ["/callback"]
