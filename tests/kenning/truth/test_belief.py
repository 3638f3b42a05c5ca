"""Belief and valid time: verify, supersede, and recall(as_of) answering about both times."""

from __future__ import annotations

import pytest

from kenning.core.clock import ManualClock
from kenning.core.errors import Conflict, NotFound
from kenning.core.models import Memory
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.truth.belief import end_of_validity

DAY = 86_400.0


def test_verify_marks_verified_and_records_the_note(engine: Engine) -> None:
    key = engine.memories.remember(
        Draft("The staging database is Postgres 16", project="p"), actor="a"
    ).key
    verified = engine.belief.verify(key, "checked in the console", actor="alice")
    assert verified.trust == "verified"
    assert verified == engine.memories.get(key)  # what verify returns is what was stored
    (event,) = [e for e in engine.store.audit.history(key) if e.action == "verify"]
    assert (event.actor, event.reason) == ("alice", "checked in the console")
    assert event.details["before"]["trust"] == "stated"
    assert event.details["after"]["trust"] == "verified"


def test_verify_refuses_a_disputed_memory_and_unknown_keys(engine: Engine) -> None:
    engine.memories.remember(Draft("Do not use pickle", project="p"), actor="a")
    key = engine.memories.remember(Draft("Use pickle for caching", project="p"), actor="a").key
    assert engine.memories.get(key).trust == "disputed"
    with pytest.raises(Conflict, match="disputed"):
        engine.belief.verify(key, None, actor="alice")
    with pytest.raises(NotFound):
        engine.belief.verify(
            engine.store.memories.new_key("knowledge", "01AAAAAAAAAAAAAAAAAAAAAAAA"),
            None,
            actor="alice",
        )


def test_as_of_answers_with_what_was_believed_then(engine: Engine, clock: ManualClock) -> None:
    old = engine.memories.remember(
        Draft("The API rate limit is 100 requests per minute", project="p"), actor="a"
    ).key
    first_day = clock.now() + 3600
    clock.advance(10 * DAY)
    new = engine.memories.remember(
        Draft("The API rate limit is 500 requests per minute, not 100", project="p"),
        actor="a",
        allow_duplicate=True,
    ).key
    (record,), _ = engine.contradictions.listing()
    engine.contradictions.resolve(record.id, "keep_b", "raised in the new plan", actor="alice")
    question = "what is the API rate limit?"

    def ask(**kwargs: object) -> list[str]:
        hits = engine.recaller.recall(RecallRequest(question, projects=["p"], **kwargs)).hits  # type: ignore[arg-type]
        return [h.memory.key for h in hits]

    assert ask() == [new]
    assert ask(as_of=first_day) == [old]
    assert set(ask(include_superseded=True)) == {old, new}
    assert engine.memories.get(old).valid_to == engine.memories.get(new).valid_from


def test_end_of_validity_when_the_older_side_wins() -> None:
    older = Memory(key="k:a", created_at=100.0, valid_from=100.0)
    newer = Memory(key="k:b", created_at=200.0, valid_from=200.0)
    assert end_of_validity(older, newer, now=300.0) == 200.0  # newer took over when it began
    assert end_of_validity(newer, older, now=300.0) == 300.0  # newer was believed until refuted
