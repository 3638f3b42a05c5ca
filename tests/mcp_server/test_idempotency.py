"""Idempotency keys on the create tools through real MCP clients: parallel calls and a later retry
with one key create once and all answer the first reply (docs/reliability.md, "Duplicates and
retries")."""

from __future__ import annotations

import asyncio
from typing import Any

from tests.mcp_server.conftest import McpHarness, ok, text_of

CONTEXT = {
    "name": "ledger",
    "description": "double-entry ledger service",
    "stack": ["python 3.11", "postgres"],
}


async def set_context(mcp: McpHarness, args: dict[str, Any]) -> dict[str, Any] | str:
    """The reply on success, else the error text the agent reads."""
    async with mcp.client("write") as client:
        result = await client.call_tool("set_project_context", args, raise_on_error=False)
        if result.is_error:
            return text_of(result)
        assert isinstance(result.structured_content, dict)
        return result.structured_content


async def test_a_project_context_set_with_one_key_in_parallel_and_retried_is_created_once(
    mcp: McpHarness,
) -> None:
    keyed = {**CONTEXT, "idempotency_key": "ctx-ledger-0001"}
    answered = await asyncio.gather(*(set_context(mcp, keyed) for _ in range(4)))
    replies = [r for r in answered if isinstance(r, dict)]
    assert len(replies) == len(answered), answered
    assert {r["status"] for r in replies} == {"created"}
    assert all(r == replies[0] for r in replies)  # one reply, the same for every call
    assert await set_context(mcp, keyed) == replies[0]  # a later retry: still the first reply
    async with mcp.client("write") as client:
        trail = await ok(client, "history", {"key": replies[0]["project"]["key"]})
    assert [e["action"] for e in trail["events"]] == ["project_context"]
    # the positive control: without the key the same call is a new one, and finds nothing to do
    unkeyed = await set_context(mcp, CONTEXT)
    assert isinstance(unkeyed, dict)
    assert unkeyed["status"] == "unchanged"
    # the key reused for another request is refused, and nothing is written
    other = await set_context(mcp, {**keyed, "description": "a different service"})
    assert isinstance(other, str)
    assert "this idempotency key was used for a different set_project_context request" in other
    async with mcp.client("write") as client:
        now = await ok(client, "get_project_context", {"name": "ledger"})
    assert now["project"]["description"] == "double-entry ledger service"
