"""Every transport mode serves every kind of client (docs/mcp-server.md#transport).

fastmcp's ``Client`` speaks the per-request protocol (2026-07-28, no handshake); the official
``mcp`` SDK's ``ClientSession`` opens with the ``initialize`` handshake (2025-11-25) and keeps a
session when the server gives one. Both must work against a stateless and a stateful server,
with JSON or SSE answers.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from kenning.core.settings import Settings
from kenning.engine import Engine
from tests.mcp_server.conftest import McpHarness, mcp_settings, ok, remember, start_harness

MODES = {
    "stateless_json": (True, True),
    "stateless_sse": (True, False),
    "stateful_json": (False, True),
    "stateful_sse": (False, False),
}
FACT = "The staging deploy needs the VPN profile called orbit-staging before kubectl works."
QUESTION = "what does kubectl on staging need?"


@pytest.fixture(params=list(MODES))
def served(
    request: pytest.FixtureRequest, engine: Engine, settings: Settings
) -> Iterator[McpHarness]:
    stateless, json_response = MODES[request.param]
    harness = start_harness(
        engine, mcp_settings(settings, mcp_stateless=stateless, mcp_json_response=json_response)
    )
    yield harness
    harness.service.stop()


async def test_fastmcp_client_remembers_and_recalls(served: McpHarness) -> None:
    async with served.client("write") as client:
        key = await remember(client, FACT, project="infra")
        found = await ok(client, "recall", {"query": QUESTION, "project": "infra", "top_k": 3})
    assert found["results"][0]["key"] == key


async def test_official_sdk_client_remembers_and_recalls(served: McpHarness) -> None:
    headers = {"Authorization": f"Bearer {served.secrets['write']}"}
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(served.url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        stored = await session.call_tool("remember", {"content": FACT, "project": "infra"})
        found = await session.call_tool(
            "recall", {"query": QUESTION, "project": "infra", "top_k": 3}
        )
    assert not stored.is_error
    assert not found.is_error
    assert isinstance(stored.structured_content, dict)
    assert isinstance(found.structured_content, dict)
    assert found.structured_content["results"][0]["key"] == stored.structured_content["key"]


def _initialize(harness: McpHarness) -> httpx.Response:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    }
    headers = {
        "authorization": f"Bearer {harness.secrets['read']}",
        "accept": "application/json, text/event-stream",
    }
    return httpx.post(harness.url, json=body, headers=headers, timeout=30)


def _content_type(response: httpx.Response) -> str:
    return response.headers["content-type"].split(";")[0]


def test_a_session_only_when_stateful_and_the_answer_framed_as_set(served: McpHarness) -> None:
    answered = _initialize(served)
    assert answered.status_code == 200
    assert ("mcp-session-id" in answered.headers) is not served.settings.mcp_stateless
    expected = "application/json" if served.settings.mcp_json_response else "text/event-stream"
    assert _content_type(answered) == expected


def test_the_defaults_are_stateless_with_json_answers(engine: Engine, settings: Settings) -> None:
    defaults = Settings.model_fields
    assert defaults["mcp_stateless"].default is True
    assert defaults["mcp_json_response"].default is True
    harness = start_harness(engine, mcp_settings(settings))
    try:
        answered = _initialize(harness)
    finally:
        harness.service.stop()
    assert "mcp-session-id" not in answered.headers
    assert _content_type(answered) == "application/json"
