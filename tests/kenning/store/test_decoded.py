"""A recall's candidates decoded once per stored reply (kenning.store.decoded): a repeat read
decodes nothing new, and an edit, a transition, a forget or a rewrite of the same key is read
as it now stands. Real store and model."""

from __future__ import annotations

from kenning.core import schema
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.store.decoded import Decoded
from kenning.store.recalls import Counter

BACKUP = "The nightly backup job copies the Valkey AOF to object storage at 02:00 UTC."
QUESTION = "when does the nightly backup run?"


def _hit(engine: Engine, **kwargs: object) -> tuple[str, str, str, int]:
    (hit,) = engine.recaller.recall(
        RecallRequest(QUESTION, projects=["p"], top_k=1, **kwargs)  # type: ignore[arg-type]
    ).hits
    m = hit.memory
    return m.key, m.content, m.state, m.recall_count


def _decoded(engine: Engine) -> Decoded:
    return engine.ctx.store.memories.decoded


def test_the_live_count_is_never_served_from_what_was_kept(engine: Engine) -> None:
    key = engine.memories.remember(Draft(BACKUP, project="p"), actor="a").key
    assert _hit(engine) == (key, BACKUP, "active", 1)
    kept = len(_decoded(engine))
    assert kept >= 1
    for count in (2, 3):  # the returned memory's counter changed: decoded again, counted live
        assert _hit(engine) == (key, BACKUP, "active", count)
        kept += 1
        assert len(_decoded(engine)) == kept


def test_an_edit_and_a_transition_are_read_as_they_now_stand(engine: Engine) -> None:
    key = engine.memories.remember(Draft(BACKUP, project="p"), actor="a").key
    assert _hit(engine)[:3] == (key, BACKUP, "active")  # positive control: kept now
    edited = BACKUP.replace("02:00", "03:30")
    engine.memories.update(key, edited, actor="a", reason="moved")
    assert _hit(engine)[:3] == (key, edited, "active")
    engine.lifecycle.deprioritise(key, reason="old", actor="a")
    assert _hit(engine, include_deprioritised=True)[:3] == (key, edited, "deprioritised")


def test_a_forgotten_memory_is_gone_and_a_new_one_is_read_afresh(engine: Engine) -> None:
    key = engine.memories.remember(Draft(BACKUP, project="p"), actor="a").key
    assert _hit(engine)[0] == key
    engine.memories.forget(key, confirm=True, actor="a", reason="test")
    result = engine.recaller.recall(RecallRequest(QUESTION, projects=["p"], top_k=1))
    assert result.hits == ()
    again = engine.memories.remember(Draft(BACKUP, project="p"), actor="a").key
    assert _hit(engine)[:2] == (again, BACKUP)


def test_a_gone_hash_is_none_and_a_full_store_starts_over() -> None:
    decoded = Decoded(size=2)
    none = Counter(None, None)

    def row(content: str) -> list[bytes | None]:
        values = {"content": content.encode(), "created_at": b"1700000000.0"}
        return [values.get(name) for name in schema.FIELD_NAMES]

    assert decoded.memory("t:mem:a", [None] * len(schema.FIELD_NAMES), none) is None
    first = decoded.memory("t:mem:a", row("one"), none)
    assert first is not None
    assert first.content == "one"
    assert decoded.memory("t:mem:a", row("one"), none) is first  # kept
    counted = decoded.memory("t:mem:a", row("one"), Counter(4, 5.0))
    assert counted is not None
    assert (counted.recall_count, counted.last_recalled) == (4, 5.0)
    assert len(decoded) == 2
    changed = decoded.memory("t:mem:a", row("two"), none)  # the store was full: started over
    assert changed is not None
    assert changed.content == "two"
    assert len(decoded) == 1
