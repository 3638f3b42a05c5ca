"""remember / recall round trips through the real model and the real index."""

from __future__ import annotations

import pytest

from kenning.core.errors import InvalidInput
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest


def test_paraphrased_query_finds_the_memory(engine: Engine) -> None:
    stored = engine.memories.remember(
        Draft("Run the test suite with `make test`; it starts its own Valkey.", project="kenning"),
        actor="agent",
    )
    engine.memories.remember(
        Draft("The dashboard uses Jinja2 templates and htmx.", project="kenning"), actor="agent"
    )
    result = engine.recaller.recall(
        RecallRequest("how do I execute the tests?", projects=["kenning"])
    )
    assert result.hits[0].memory.key == stored.key
    assert result.hits[0].memory.content.startswith("Run the test suite")


def test_duplicate_is_refused_with_the_existing_key(engine: Engine) -> None:
    first = engine.memories.remember(
        Draft("Always pin torch to 2.13.0 CPU build.", project="p1"), actor="a"
    )
    again = engine.memories.remember(
        Draft("Always pin torch to 2.13.0 CPU build!", project="p1"), actor="a"
    )
    assert first.status == "stored"
    assert again.status == "duplicate"
    assert again.key == first.key


def test_project_injection_is_refused(engine: Engine) -> None:
    with pytest.raises(InvalidInput, match="project name"):
        engine.memories.remember(Draft("x is y", project="a}|@project:{b"), actor="a")
