"""Bulk remember: deduplicated against the store and within the batch, audited, searchable at once."""

from __future__ import annotations

from kenning.bulk import Bulk
from kenning.engine import Engine
from kenning.memory import Draft
from kenning.recall import RecallRequest


def test_remember_many_stores_dedups_and_audits(engine: Engine) -> None:
    existing = engine.memories.remember(Draft("Run the tests with `pytest -x -q` in atlas-api.",
                                              project="atlas-api"), actor="tester")
    assert existing.status == "stored"
    drafts = [
        Draft("Deploy atlas-api with `fly deploy --app atlas-svc` after CI is green.", project="atlas-api"),
        Draft("Run the tests with `pytest -x -q` in atlas-api.", project="atlas-api"),  # repeats the store
        Draft("Pin numpy==1.26.4: the 2.x ABI breaks our extension.", project="atlas-api"),
        Draft("Pin numpy==1.26.4: the 2.x ABI breaks our extension.", project="atlas-api"),  # repeats the batch
        Draft("Pin numpy==1.26.4: the 2.x ABI breaks our extension.", project="borealis-web"),  # other project
    ]
    results = Bulk(engine.ctx, engine.memories).remember_many(drafts, actor="importer", batch=3)
    assert [r.status for r in results] == ["stored", "duplicate", "stored", "duplicate", "stored"]
    assert results[1].key == existing.key
    assert results[3].key == results[2].key
    stored = [r.key for r in results if r.status == "stored"]
    for key in stored:
        events = engine.store.audit.history(key)
        assert [e.action for e in events] == ["remember"]
        assert events[0].actor == "importer"
    found = engine.recaller.recall(RecallRequest("how do we ship atlas-api to production?", projects=["atlas-api"]))
    assert found.hits[0].memory.key == stored[0]
    assert engine.memories.get(stored[2]).project == "borealis-web"
