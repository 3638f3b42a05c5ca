"""queue_status through a real MCP client: a read token sees the enrichment queue and
whether the extras are on."""

from __future__ import annotations

from tests.mcp_server.conftest import McpHarness, ok


async def test_queue_status_reports_the_queue_and_that_the_extras_are_off(mcp: McpHarness) -> None:
    async with mcp.client("read") as client:
        status = await ok(client, "queue_status")
    assert (status["waiting"], status["in_flight"], status["parked"]) == (0, 0, 0)
    assert status["llm"] == "off (no KENNING_ANTHROPIC_API_KEY)"
    assert status["recent_parked"] == []
    assert status["spent_today"] == {}
