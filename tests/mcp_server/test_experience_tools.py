"""Experience, graveyard and ranking through a real MCP client (issue 4, "Must show")."""

from __future__ import annotations

from kenning.core.clock import ManualClock
from tests.mcp_server.conftest import McpHarness, ok, refused, remember

DAY = 86_400.0


async def test_an_abandoned_approach_from_project_a_warns_first_in_project_b(
    mcp: McpHarness,
) -> None:
    async with mcp.client("write") as client:
        logged = await ok(
            client,
            "log_abandoned",
            {
                "name": "Go",
                "type": "library",
                "effort": 3,
                "reason": "no generics for our codegen",
                "project": "project-a",
            },
        )
        google = await remember(
            client, "Our search page calls the Google custom search API.", project="project-b"
        )
        hit = await ok(
            client,
            "recall",
            {"query": "should we rewrite the worker in Go?", "project": "project-b"},
        )
        assert next(iter(hit)) == "warnings"
        assert [(w["name"], w["project"], w["memory"], w["effort"]) for w in hit["warnings"]] == [
            ("Go", "project-a", logged["key"], 3)
        ]
        assert hit["warnings"][0]["reason"] == "no generics for our codegen"
        assert logged["key"] not in [r["key"] for r in hit["results"]]  # never takes a top_k slot
        miss = await ok(
            client,
            "recall",
            {"query": "how does the Google search page work?", "project": "project-b"},
        )
        assert "warnings" not in miss
        # positive control: the recall found the google memory
        assert google in [r["key"] for r in miss["results"]]
        index = await ok(
            client, "recall_index", {"query": "rewrite it in go", "project": "project-b"}
        )
        assert index["warnings"][0]["name"] == "Go"
        direct = await ok(client, "warn_if_abandoned", {"query": "plan: port the CLI to go"})
        assert [w["name"] for w in direct["warnings"]] == ["Go"]
        assert (await ok(client, "warn_if_abandoned", {"query": "ask google"}))["warnings"] == []


async def test_effort_weighted_success_beats_an_equally_similar_abandonment(
    mcp: McpHarness,
) -> None:
    text = "Parse the vendor CSV export with a streaming reader to keep memory flat."
    async with mcp.client("write") as client:
        won = await remember(client, text)
        lost = await remember(client, text + " ", allow_duplicate=True)
        recorded = await ok(
            client,
            "record_experience",
            {
                "key": won,
                "effort": 4,
                "outcome": "succeeded",
                "iterations": 3,
                "breakthrough": "csv.reader on a stream",
                "gotchas": ["BOM in the header"],
                "abandoned_approaches": [
                    {"name": "pandas", "type": "library", "reason": "ran out of memory"}
                ],
            },
        )
        assert recorded["experience_weight"] == 1.5
        await ok(client, "record_experience", {"key": lost, "effort": 4, "outcome": "abandoned"})
        found = await ok(client, "recall", {"query": "how do we parse the vendor csv?"})
        by_key = {r["key"]: r for r in found["results"]}
        assert abs(by_key[won]["similarity"] - by_key[lost]["similarity"]) < 1e-3
        assert found["results"][0]["key"] == won
        got = await ok(client, "get_experience", {"key": won})
        assert got["experience"]["abandoned_approaches"][0]["name"] == "pandas"
        summary = await ok(client, "experience_summary", {"project": "alpha"})
        assert summary["outcomes"] == {"succeeded": 1, "pivoted": 0, "abandoned": 1}
        assert summary["top_breakthroughs"][0]["key"] == won
        assert [g["name"] for g in summary["graveyard"]] == ["pandas"]
        assert "invalid_arguments: effort: " in await refused(
            client, "record_experience", {"key": won, "effort": 9, "outcome": "succeeded"}
        )


async def test_a_two_year_old_memory_ranks_below_a_fresh_equal_one(
    mcp: McpHarness, clock: ManualClock
) -> None:
    text = "The nightly backup job copies the Valkey AOF to object storage at 02:00 UTC."
    async with mcp.client("write") as client:
        clock.advance(-730 * DAY)
        old = await remember(client, text)
        clock.advance(730 * DAY)
        fresh = await remember(client, text, allow_duplicate=True)
        found = await ok(client, "recall", {"query": "when does the backup run?"})
        assert [r["key"] for r in found["results"]] == [fresh, old]
        assert found["results"][1]["factors"]["recency"] == 0.9


async def test_a_query_naming_a_date_prefers_the_event_then(mcp: McpHarness) -> None:
    text = "The database failover happened and the replica was promoted."
    async with mcp.client("write") as client:
        march = await remember(client, text, event_date="2026-03-14")
        june = await remember(client, text, event_date="2026-06-02", allow_duplicate=True)
        plain = await ok(client, "recall", {"query": "database failover"})
        assert {r["key"] for r in plain["results"]} == {march, june}  # positive control: both found
        dated = await ok(
            client, "recall", {"query": "what happened with the database failover on 2026-03-14?"}
        )
        assert dated["results"][0]["key"] == march
        assert dated["results"][0]["factors"]["temporal"] == 1.5
        assert (await ok(client, "recall", {"query": "the database failover in June"}))["results"][
            0
        ]["key"] == june


async def test_a_warning_never_takes_a_top_k_slot(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        jobs = await remember(client, "Background jobs run on RQ workers backed by Redis.")
        await ok(
            client,
            "log_abandoned",
            {
                "name": "celery",
                "type": "library",
                "effort": 2,
                "reason": "too heavy for three jobs",
                "project": "alpha",
            },
        )
        found = await ok(
            client,
            "recall",
            {
                "query": "which library runs our background jobs, celery?",
                "project": "alpha",
                "top_k": 1,
            },
        )
        assert [w["name"] for w in found["warnings"]] == ["celery"]
        assert len(found["results"]) == 1
        wider = await ok(
            client,
            "recall",
            {
                "query": "which library runs our background jobs, celery?",
                "project": "alpha",
                "top_k": 5,
            },
        )
        assert jobs in [r["key"] for r in wider["results"]]
