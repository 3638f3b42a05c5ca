"""The recall log: what each recall returned, bounded retention, and "why did you mention X"."""

from __future__ import annotations

from dataclasses import replace

from kenning.core.clock import ManualClock
from kenning.core.models import iso
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.runtime.embedding import Embedder
from kenning.store.client import text
from tests.conftest import make_settings


def remember(engine: Engine, text: str) -> str:
    return engine.memories.remember(Draft(text, project="p"), actor="agent").key


def test_each_recall_is_logged_with_results_actor_and_time(
    engine: Engine, clock: ManualClock
) -> None:
    key = remember(engine, "Feature flags are read from LaunchDarkly at start-up.")
    engine.recaller.recall(RecallRequest("where do feature flags come from?", actor="agent:cursor"))
    entry = engine.recall_log.recent(1)[0]
    assert (entry.query, entry.actor, entry.at) == (
        "where do feature flags come from?",
        "agent:cursor",
        iso(clock.now()),
    )
    assert entry.results[0]["key"] == key
    assert entry.results[0]["score"] > 0


def test_why_did_you_mention_by_words(engine: Engine, clock: ManualClock) -> None:
    key = remember(engine, "Feature flags are read from LaunchDarkly at start-up.")
    remember(engine, "The CI pipeline runs on GitHub Actions.")
    engine.recaller.recall(RecallRequest("how is CI set up?"))
    clock.advance(3600)
    engine.recaller.recall(RecallRequest("where do feature flags come from?"))
    answer = engine.recall_log.why_did_you_mention("LaunchDarkly")
    assert answer.matched_by == "words"
    assert [m["key"] for m in answer.memories] == [key]
    assert [(m["query"], m["key"], m["rank"]) for m in answer.mentions] == [
        ("where do feature flags come from?", key, 1)
    ]
    assert answer.mentions[0]["at"] == iso(clock.now())


def test_why_did_you_mention_by_meaning_and_by_key(engine: Engine) -> None:
    key = remember(engine, "Feature flags are read from LaunchDarkly at start-up.")
    engine.recaller.recall(RecallRequest("where do feature flags come from?"))
    by_meaning = engine.recall_log.why_did_you_mention("the feature toggle service")
    assert by_meaning.matched_by == "meaning"
    assert key in [m["key"] for m in by_meaning.memories]
    assert by_meaning.mentions[0]["key"] == key
    assert (
        engine.recall_log.why_did_you_mention(key).mentions[0]["query"]
        == "where do feature flags come from?"
    )


def test_why_did_you_mention_says_when_nothing_surfaced_it(engine: Engine) -> None:
    remember(engine, "Feature flags are read from LaunchDarkly at start-up.")
    answer = engine.recall_log.why_did_you_mention("LaunchDarkly")
    assert answer.memories  # the memory exists ...
    assert answer.mentions == []  # ... but no recall returned it
    assert "no logged recall" in (answer.note or "")


def test_the_log_is_bounded(
    engine: Engine, settings: Settings, embedder: Embedder, clock: ManualClock
) -> None:
    small = make_settings(
        settings.data_dir,
        settings.valkey_port,
        key_prefix=settings.key_prefix,
        recall_log_max_entries=100,
    )
    bounded = Engine.open(small, engine.store.client, embedder, clock=clock)
    remember(bounded, "Feature flags are read from LaunchDarkly at start-up.")
    for i in range(105):
        bounded.recall_log.record(f"query {i}", [], actor="a")
    assert bounded.recall_log.store.length() == 100
    assert bounded.recall_log.recent(1)[0].query == "query 104"


def test_a_recall_logs_the_same_entry_as_record(engine: Engine, clock: ManualClock) -> None:
    key = remember(engine, "Feature flags are read from LaunchDarkly at start-up.")
    hits = engine.recaller.recall(
        RecallRequest("where do feature flags come from?", actor="a")
    ).hits
    logged = engine.recall_log.recent(1)[0]  # written with the hits' counters (Store.log_recall)
    entry_id = engine.recall_log.record("where do feature flags come from?", hits, actor="a")
    queued = engine.recall_log.recent(1)[0]
    assert queued.id == text(entry_id)
    assert [r["key"] for r in queued.results] == [key]
    assert replace(queued, id=logged.id) == logged
