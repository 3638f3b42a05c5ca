"""Parallel resolve_contradiction calls through real MCP clients: every acknowledged call is one
link of a chain of decisions, every other call is refused with ``conflict`` and wrote nothing, and
the sides agree with the record (docs/reliability.md, "Decisions"; the engine-level race with
every call deciding from the same read is tests/kenning/test_decisions.py)."""

from __future__ import annotations

import asyncio
from typing import Any

from fastmcp import Client

from kenning.core.clock import ManualClock
from tests.mcp_server.conftest import McpHarness, ok, remember, text_of

FLY = "We deploy with Fly"
KAMAL = "We no longer use Fly; we deploy with Kamal"
DECISIONS: list[dict[str, Any]] = [
    {"decision": "keep_a"},
    {"decision": "keep_b"},
    {"decision": "both_valid", "note": "Fly for staging, Kamal for production"},
    {"decision": "not_a_contradiction"},
    {"decision": "merge", "content": "We deploy with Kamal; Fly was retired"},
    {"decision": "keep_b"},
]


async def resolve(mcp: McpHarness, record_id: str, args: dict[str, Any]) -> dict[str, Any] | str:
    """The record on success, else the error text the agent reads."""
    async with mcp.client("write") as client:
        result = await client.call_tool(
            "resolve_contradiction", {"id": record_id, **args}, raise_on_error=False
        )
        if result.is_error:
            return text_of(result)
        assert isinstance(result.structured_content, dict)
        return result.structured_content


async def test_parallel_resolves_through_mcp_leave_one_consistent_chain(
    mcp: McpHarness, clock: ManualClock
) -> None:
    async with mcp.client("write") as client:
        fly = await remember(client, FLY, project="shop")
        clock.advance(86_400)
        kamal = await remember(client, KAMAL, project="shop")
        (record,) = (await ok(client, "list_contradictions", {"project": "shop"}))["contradictions"]
    results = await asyncio.gather(*(resolve(mcp, record["id"], d) for d in DECISIONS))
    acks = [r for r in results if isinstance(r, dict)]
    refusals = [r for r in results if isinstance(r, str)]
    assert acks  # positive control: at least one call decided
    for text in refusals:
        assert "conflict" in text, text
        assert "changed while it was being resolved" in text, text
        assert len(text) < 1_000
    async with mcp.client("write") as client:
        await check_chain(client, record["id"], fly, kamal, len(acks))


async def check_chain(client: Client[Any], record_id: str, fly: str, kamal: str, acks: int) -> None:
    """Exactly one resolve event per side per acknowledged call, chained decision to decision,
    and both sides as the final decision says."""
    trails = [await ok(client, "history", {"key": key}) for key in (fly, kamal)]
    chains = [[e for e in t["events"] if e["action"] == "resolve_contradiction"] for t in trails]
    for chain in chains:
        assert len(chain) == acks
        decisions = [e["details"]["decision"] for e in chain]
        assert [e["details"]["previous_decision"] for e in chain] == ["", *decisions[:-1]]
    final = (await ok(client, "list_contradictions", {"status": "all", "key": fly}))[
        "contradictions"
    ][0]
    assert final["id"] == record_id
    assert final["decision"] == chains[0][-1]["details"]["decision"]
    a, b = final["a"], final["b"]
    expected = {
        "keep_a": ("stated", "superseded"),
        "keep_b": ("superseded", "stated"),
        "merge": ("superseded", "superseded"),
        "both_valid": ("stated", "stated"),
        "not_a_contradiction": ("stated", "stated"),
    }[final["decision"]]
    assert (a["trust"], b["trust"]) == expected
