"""Contradictions people actually write, through a real MCP client (issue 31, "Must show").

The four pairs a new user tried: each is opened as a contradiction by ``remember``, and ``recall``
ranks the newer statement first (the older flagged ``possibly_stale``, naming the newer) even
where the older one matches the query better; an ``as_of`` read from before the newer statement
still answers with the older one.
"""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client

from kenning.core.clock import ManualClock
from kenning.core.models import iso
from tests.mcp_server.conftest import McpHarness, ok, remember

DAY = 86_400.0
# (older, newer, a query about them, the detector)
PAIRS = (
    (
        "Postgres runs on port 5433 (5432 was taken)",
        "Postgres moved back to 5432; the 5433 workaround is gone",
        "which port does Postgres run on?",
        "value",
    ),
    (
        "shop-api deploys with Kamal to two Hetzner boxes",
        "shop-api does not deploy with Kamal any more; it deploys with Helm",
        "how does shop-api deploy?",
        "reversal",
    ),
    (
        "The web-app image CDN is Cloudflare Images",
        "The web-app no longer uses Cloudflare Images",
        "which image CDN does the web-app use?",
        "reversal",
    ),
    (
        "The API rate limit is 100 requests per minute",
        "The API rate limit is 1000 requests per minute (raised in March)",
        "what is the API rate limit?",
        "value",
    ),
)


async def _recall(client: Client[Any], query: str, project: str, **extra: Any) -> list[Any]:
    found = await ok(client, "recall", {"query": query, "projects": [project], **extra})
    return list(found["results"])


@pytest.mark.parametrize(("older", "newer", "query", "detector"), PAIRS)
async def test_the_pair_is_opened_and_the_newer_statement_leads(
    mcp: McpHarness, clock: ManualClock, older: str, newer: str, query: str, detector: str
) -> None:
    project = "written"
    async with mcp.client("write") as client:
        old = await remember(client, older, project=project)
        before = clock.now() + 60
        clock.advance(200 * DAY)  # both far past the recency grace: age decides nothing
        stored = await ok(client, "remember", {"content": newer, "project": project})
        new = stored["key"]
        assert stored["status"] == "stored"
        assert any(old in note and "contradiction" in note for note in stored["notes"])
        (record,) = (await ok(client, "list_contradictions", {"project": project}))[
            "contradictions"
        ]
        assert (record["a"]["key"], record["b"]["key"], record["detector"]) == (
            old,
            new,
            detector,
        )
        assert record["evidence"]["why"]  # it says why, in words

        results = await _recall(client, query, project)
        assert [r["key"] for r in results][:2] == [new, old]
        by_key = {r["key"]: r for r in results}
        assert by_key[old]["possibly_stale"]["newer"] == new
        assert by_key[old]["possibly_stale"]["contradiction"] == record["id"]
        assert "possibly_stale" not in by_key[new]

        then = await _recall(client, query, project, as_of=iso(before))
        assert [r["key"] for r in then] == [old]
        assert "possibly_stale" not in then[0]


async def test_a_resolution_ends_the_lead_and_an_unrelated_pair_never_had_one(
    mcp: McpHarness, clock: ManualClock
) -> None:
    async with mcp.client("write") as client:
        old = await remember(client, "The API rate limit is 100 requests per minute", "limits")
        clock.advance(DAY)
        other = await ok(
            client,
            "remember",
            {"content": "The API rate limit applies per API key", "project": "limits"},
        )
        assert "notes" not in other  # no value of its own: nothing to dispute
        clock.advance(DAY)
        new = await remember(client, "The API rate limit is 1000 requests per minute", "limits")
        (record,) = (await ok(client, "list_contradictions", {"project": "limits"}))[
            "contradictions"
        ]
        assert (record["a"]["key"], record["b"]["key"]) == (old, new)
        await ok(
            client,
            "resolve_contradiction",
            {"id": record["id"], "decision": "keep_b", "note": "raised in March"},
        )
        results = await _recall(client, "what is the API rate limit?", "limits")
        found = [r["key"] for r in results]
        assert new in found
        assert old not in found  # superseded now: out of default recall
        assert all("possibly_stale" not in r for r in results)
