"""Each engine service is built once (Engine.build) and shared by every service that uses it."""

from __future__ import annotations

from kenning.engine import Engine


def test_each_service_is_built_once_and_shared(engine: Engine) -> None:
    suppressions = [engine.memories.suppressions, engine.lifecycle.suppressions, engine.experience.suppressions,
                    engine.inspection.suppressions, engine.recaller.suppressions, engine.recall_log.suppressions,
                    engine.briefing.suppressions]
    assert all(s is engine.suppressions for s in suppressions)
    assert engine.experience.graveyard is engine.recaller.graveyard is engine.briefing.graveyard
    assert engine.briefing.projects is engine.projects
    assert engine.memories.contradictions.belief is engine.belief
    assert engine.recaller.log is engine.recall_log
    assert engine.duplicates.memories is engine.lifecycle.memories is engine.memories
    assert engine.history.contradictions is engine.briefing.contradictions is engine.contradictions
