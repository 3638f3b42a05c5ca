"""The graveyard's warnings from a look-up made elsewhere (recall sends it in its own pipeline)."""

from __future__ import annotations

from kenning.engine import Engine
from kenning.language import phrases
from kenning.memory.experience import Approach


def test_warnings_from_a_lookup_equal_warn(engine: Engine) -> None:
    key = engine.experience.log_abandoned(
        Approach("Celery", "library", "too heavy"), effort=3, project="p", actor="a"
    ).key
    graveyard = engine.recaller.graveyard
    found = graveyard.index.lookup(phrases.ngrams("should the worker use celery?"))
    assert [(w.name, w.key) for w in graveyard.warnings(found)] == [("Celery", key)]
    assert graveyard.warnings(found) == graveyard.warn("should the worker use celery?")
    assert graveyard.warnings({}) == []
