"""Each engine service is built once (Engine.build) and shared by every service that uses it."""

from __future__ import annotations

import pytest
import valkey

from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.runtime.embedding import Embedder


def test_each_service_is_built_once_and_shared(engine: Engine) -> None:
    suppressions = [
        engine.memories.suppressions,
        engine.lifecycle.suppressions,
        engine.experience.suppressions,
        engine.inspection.suppressions,
        engine.recaller.suppressions,
        engine.recall_log.suppressions,
        engine.briefing.suppressions,
    ]
    assert all(s is engine.suppressions for s in suppressions)
    assert engine.experience.graveyard is engine.recaller.graveyard is engine.briefing.graveyard
    assert engine.briefing.projects is engine.projects
    assert engine.memories.contradictions.belief is engine.belief
    assert engine.recaller.log is engine.recall_log
    assert engine.duplicates.memories is engine.lifecycle.memories is engine.memories
    assert engine.history.contradictions is engine.briefing.contradictions is engine.contradictions


def test_open_takes_the_roots_connection_or_a_ready_store(
    engine: Engine, settings: Settings, client: valkey.Valkey, embedder: Embedder
) -> None:
    on_client = Engine.open(settings, client, embedder, clock=engine.ctx.clock)
    assert on_client.store.prefix == settings.key_prefix
    on_store = Engine.open(settings, engine.store, embedder, clock=engine.ctx.clock)
    assert on_store.store is engine.store  # a ready Store is used as it is
    with pytest.raises(ValueError, match="key prefix"):
        Engine.open(
            settings.model_copy(update={"key_prefix": "elsewhere:"}), engine.store, embedder
        )
