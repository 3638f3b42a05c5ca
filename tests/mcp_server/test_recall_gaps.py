"""Issue 33 through a real MCP client: a question about a period alone answers with the memories of
that period and names the window it used."""

from __future__ import annotations

from typing import Any

from fastmcp import Client

from tests.mcp_server.conftest import ok, remember


async def recall(client: Client[Any], query: str) -> dict[str, Any]:
    return await ok(client, "recall", {"query": query, "project": "alpha"})


def keys(found: dict[str, Any]) -> set[str]:
    return {r["key"] for r in found["results"]}


async def test_what_happened_in_a_month_returns_that_months_memories(
    mcp_client: Client[Any],
) -> None:
    november = {
        await remember(mcp_client, text, event_date=day)
        for day, text in (
            ("2024-11-05", "Incident: the checkout service returned 502s for forty minutes."),
            ("2024-11-19", "Priya: For billing we decided to cap retries at three."),
        )
    }
    october = await remember(
        mcp_client, "Nate: We moved the nightly export to object storage.", event_date="2024-10-21"
    )
    found = await recall(mcp_client, "what happened in November 2024?")
    assert keys(found) == november
    assert found["window"] == {
        "label": "november 2024",
        "from": "2024-11-01",
        "to": "2024-11-30",
        "only": True,
    }
    assert "read as a date, 2024-11-01 to 2024-11-30" in found["notes"][0]
    # positive control: the other month's memory answers for its own month
    assert keys(await recall(mcp_client, "what happened in October 2024?")) == {october}


async def test_a_question_nothing_answers_says_so_and_keeps_the_weak_apart(
    mcp_client: Client[Any],
) -> None:
    stored = await remember(
        mcp_client, "ERR-4312 means the signing key of the invoice API expired."
    )
    unsure = await recall(mcp_client, "what does ERR-4999 mean?")
    assert unsure["results"] == []
    assert unsure["confidence"]["confident"] is False
    assert unsure["confidence"]["reason"] == "identifier_missing"
    assert [w["key"] for w in unsure["weak_candidates"]] == [stored]
    assert unsure["results_note"].startswith("no confident answer")
    # positive control: the stored code's question is a confident answer
    sure = await recall(mcp_client, "what does ERR-4312 mean?")
    assert keys(sure) == {stored}
    assert (sure["confidence"]["confident"], sure["confidence"]["reason"]) == (True, "identifier")
    assert sure["confidence"]["best_similarity"] == sure["results"][0]["similarity"]
    assert "weak_candidates" not in sure


async def test_a_question_about_a_name_never_mentioned_says_so(mcp_client: Client[Any]) -> None:
    port = await remember(mcp_client, "tax-engine listens on port 5050.")
    unsure = await recall(mcp_client, "Which port does the Terraform state server use?")
    assert unsure["results"] == []
    assert unsure["confidence"]["reason"] == "name_missing"
    assert [w["key"] for w in unsure["weak_candidates"]] == [port]
    assert "names something no memory mentions" in unsure["results_note"]
    # positive control: once a memory names it, the same question is answered
    named = await remember(mcp_client, "The Terraform state server listens on port 7443.")
    sure = await recall(mcp_client, "Which port does the Terraform state server use?")
    assert sure["results"][0]["key"] == named
    assert sure["confidence"]["confident"] is True


async def test_what_did_we_decide_in_a_month_puts_the_decision_first(
    mcp_client: Client[Any],
) -> None:
    for day, text in (
        ("2024-11-06", "Leila: Sounds good, let's pick this up in the follow-up."),
        ("2024-11-13", "Chen: Coffee first, then the stand-up."),
    ):
        await remember(mcp_client, text, event_date=day)
    decided = await remember(
        mcp_client,
        "Priya: For billing we decided to cap retries at three.",
        event_date="2024-11-19",
    )
    found = await recall(mcp_client, "What did we decide in November 2024?")
    assert found["results"][0]["key"] == decided
    assert found["window"]["only"] is True
    # positive control: the month's small talk is in the window too, ranked after the decision
    assert len(found["results"]) == 3
