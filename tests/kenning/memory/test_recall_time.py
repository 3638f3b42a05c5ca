"""Time as a way into recall (issue 33): a query that names a period fetches the memories dated
inside it; one that names only a period is answered from that period, and says which one."""

from __future__ import annotations

from datetime import UTC, datetime

from kenning.core.clock import ManualClock
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest, RecallResult

PROJECT = "timeline"
DATED = (  # (event date, content)
    ("2024-10-21", "Nate: We moved the nightly export to object storage."),
    ("2024-11-05", "Incident: the checkout service returned 502s for forty minutes."),
    ("2024-11-19", "Priya: For billing we decided to cap retries at three."),
    ("2024-11-27", "Aiko: We shipped search 4.2.0 to production."),
    ("2024-12-09", "Marco: For billing we decided to batch the webhooks every five minutes."),
    ("2025-03-12", "Leila: We decided to rotate the signing keys every ninety days."),
    ("2024-03-14", "Leila: We decided to serve thumbnails from the CDN."),
    ("2023-06-02", "Incident: the search service ran out of disk on the primary database."),
    ("2024-07-30", "Incident: the billing service timed out on every call to the provider."),
)


def _at(day: str) -> float:
    return datetime.fromisoformat(day).replace(tzinfo=UTC).timestamp()


def _store(engine: Engine) -> dict[str, str]:
    keys = {}
    for day, content in DATED:
        draft = Draft(content, project=PROJECT, namespace="episodic", event_date=day)
        keys[day] = engine.memories.remember(draft, actor="t").key
    return keys


def _recall(engine: Engine, text: str, top_k: int = 5) -> RecallResult:
    return engine.recaller.recall(RecallRequest(text, projects=[PROJECT], top_k=top_k))


def _keys(found: RecallResult) -> set[str]:
    return {h.memory.key for h in found.hits}


def test_a_question_about_a_month_alone_returns_the_memories_of_that_month(
    engine: Engine,
) -> None:
    keys = _store(engine)
    found = _recall(engine, "what happened in November 2024?")
    assert _keys(found) == {keys["2024-11-05"], keys["2024-11-19"], keys["2024-11-27"]}
    assert found.window is not None
    assert found.window_only
    assert found.public()["window"] == {
        "label": "november 2024",
        "from": "2024-11-01",
        "to": "2024-11-30",
        "only": True,
    }
    assert "the results are the memories dated then" in found.notes[0]
    assert not any(h.weak_match for h in found.hits)
    # positive control: another month answers with its own memories
    december = _recall(engine, "What happened in December 2024?")
    assert _keys(december) == {keys["2024-12-09"]}


def test_years_quarters_ranges_and_the_words_around_them(engine: Engine) -> None:
    keys = _store(engine)
    incidents = _recall(engine, "incidents in 2024")
    assert incidents.window_only
    assert _keys(incidents) <= {keys[d] for d in DATED_2024}
    assert {keys["2024-11-05"], keys["2024-07-30"]} <= _keys(incidents)
    assert keys["2023-06-02"] not in _keys(incidents)  # an incident of another year
    quarter = _recall(engine, "What did we ship in Q4 2024?")
    assert keys["2024-11-27"] in _keys(quarter)
    assert _keys(quarter) <= {
        keys["2024-10-21"],
        keys["2024-11-05"],
        keys["2024-11-19"],
        keys["2024-11-27"],
        keys["2024-12-09"],
    }
    july = _recall(engine, "What happened in July of 2024?")
    assert _keys(july) == {keys["2024-07-30"]}
    ranged = _recall(engine, "What happened between October and November 2024?")
    assert keys["2024-10-21"] in _keys(ranged)
    assert keys["2024-12-09"] not in _keys(ranged)


DATED_2024 = [d for d, _ in DATED if d.startswith("2024")]


def test_a_relative_date_is_read_against_the_engine_clock(
    engine: Engine, clock: ManualClock
) -> None:
    keys = _store(engine)
    clock.value = _at("2026-01-12")
    found = _recall(engine, "What did we decide last March?")
    assert found.window is not None
    assert found.public()["window"]["from"] == "2025-03-01"
    assert _keys(found) == {keys["2025-03-12"]}
    clock.value = _at("2025-01-12")  # a year earlier, "last March" is March 2024
    earlier = _recall(engine, "What did we decide last March?")
    assert _keys(earlier) == {keys["2024-03-14"]}


def test_a_topic_with_a_date_still_ranks_by_the_topic(engine: Engine) -> None:
    keys = _store(engine)
    found = _recall(engine, "what did we decide for billing retries in November 2024?")
    assert found.window is not None
    assert not found.window_only
    assert found.hits[0].memory.key == keys["2024-11-19"]
    assert "searched too" in found.notes[0]
    # positive control: without the date the same memory is found, and no window is stated
    plain = _recall(engine, "what did we decide for billing retries?")
    assert plain.window is None
    assert "window" not in plain.public()
    assert keys["2024-11-19"] in _keys(plain)


SMALL_TALK = (  # November 2024 small talk, beside the month's decision and release
    ("2024-11-06", "Leila: Sounds good, let's pick this up in the follow-up."),
    ("2024-11-13", "Chen: Coffee first, then the stand-up."),
    ("2024-11-20", "Joanna: Okay, got it."),
    ("2024-11-21", "Marco: Morning Tomas, how was the weekend?"),
)


def test_a_period_question_that_asks_something_of_it_ranks_what_says_it_first(
    engine: Engine,
) -> None:
    keys = _store(engine)
    for day, content in SMALL_TALK:
        draft = Draft(content, project=PROJECT, namespace="episodic", event_date=day)
        engine.memories.remember(draft, actor="t")
    decided = _recall(engine, "What did we decide in November 2024?", top_k=1)
    assert [h.memory.key for h in decided.hits] == [keys["2024-11-19"]]
    assert decided.hits[0].factors["relevance"] > decided.hits[0].similarity  # lifted
    # positive control: another question of the same month lifts another memory
    shipped = _recall(engine, "What did we ship in November 2024?", top_k=1)
    assert [h.memory.key for h in shipped.hits] == [keys["2024-11-27"]]
    incidents = _recall(engine, "incidents in November 2024", top_k=1)
    assert [h.memory.key for h in incidents.hits] == [keys["2024-11-05"]]
