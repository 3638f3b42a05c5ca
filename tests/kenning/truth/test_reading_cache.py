"""The contradiction check keeps each text's reading (kenning.language.values._read,
kenning.language.polarity.clauses, per text): an edited or forgotten memory is never judged by
what it used to say. Real store and model, through remember, update and forget."""

from __future__ import annotations

from kenning.engine import Engine
from kenning.memory.memories import Draft

FLY = "We deploy with Fly"
KAMAL = "We no longer use Fly; we deploy with Kamal"


def _contradicted(engine: Engine, text: str) -> tuple[str, list[str]]:
    """(the new key, the keys remember reported a contradiction with)."""
    result = engine.memories.remember(
        Draft(text, project="shop"), actor="agent", allow_duplicate=True
    )
    assert result.status == "stored"
    return result.key, [str(n.other) for n in result.notes if n.kind == "contradiction"]


def test_an_edited_memory_is_read_as_it_now_says(engine: Engine) -> None:
    fly, none = _contradicted(engine, FLY)
    assert none == []
    kamal, against = _contradicted(engine, KAMAL)
    assert against == [fly]  # positive control: both readings are kept now
    engine.memories.forget(kamal, confirm=True, actor="agent", reason="test")
    engine.memories.update(fly, "We deploy with Kamal", actor="agent", reason="moved")
    _, against = _contradicted(engine, KAMAL)
    assert against == []  # the edited text agrees; Fly's old reading was not used


def test_a_forgotten_memory_is_not_compared_and_a_new_one_is(engine: Engine) -> None:
    fly, _ = _contradicted(engine, FLY)
    kamal, against = _contradicted(engine, KAMAL)
    assert against == [fly]
    engine.memories.forget(fly, confirm=True, actor="agent", reason="test")
    again, against = _contradicted(engine, FLY)  # the same text as the forgotten one
    assert against == [kamal]
    assert again != fly
