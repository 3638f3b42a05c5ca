"""Poisoned dates through the MCP door: refused on the way in with a hint; a row written before the
bound never turns a tool into an internal error (docs/reliability.md)."""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client

from kenning.core.models import INVALID_DATE
from kenning.store import AuditEvent
from tests.mcp_server.conftest import McpHarness, ok, refused, remember

# a direct store write records itself too
SETUP = [AuditEvent(actor="test", action="test_setup", key="")]

POISON = ("0001-01-01T00:00:00+00:01", "9999-12-31T23:59:59-23:59")


@pytest.mark.parametrize("field", ["expires_at", "event_date", "valid_from"])
async def test_a_poisoned_date_is_refused_with_a_hint(mcp_client: Client[Any], field: str) -> None:
    for value in POISON:
        message = await refused(
            mcp_client, "remember", {"content": "release checklist is due", field: value}
        )
        assert message.startswith("invalid_input:"), message
        assert "1900-01-01" in message
    edge = await ok(
        mcp_client, "remember", {"content": "release checklist is due", field: "8999-12-31"}
    )
    assert edge["status"] == "stored"  # the positive control: the edge of the range is accepted


async def test_a_poisoned_row_never_makes_a_tool_fail(mcp: McpHarness) -> None:
    async with mcp.client("admin") as client:
        key = await remember(client, "release checklist is due", project="rel")
        assert mcp.engine.store.memories.update(
            key, {"expires_at": -62135596860.0, "event_date": 1e15}, SETUP
        )
        listed = await ok(client, "memory_audit", {"projects": ["rel"]})
        assert key in str(listed)  # the listing holding the poisoned row answers
        explained = await ok(client, "explain_memory", {"key": key})
        assert str(explained["memory"]["expires_at"]).startswith(INVALID_DATE)
        assert await ok(client, "recall_detail", {"keys": [key]})
        await ok(
            client, "update_memory", {"key": key, "content": "release checklist is due on Monday"}
        )
        preview = await ok(client, "delete_project", {"project": "rel"})
        assert key in str(preview)
        forgotten = await ok(client, "forget", {"key": key, "confirm": True})
        assert forgotten["status"] == "forgotten"
