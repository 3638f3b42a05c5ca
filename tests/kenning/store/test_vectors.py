"""A memory's vector as the store writes it (kenning/store/vectors.py): every vector is spread for
its key, so one text kept in two projects is two points of the HNSW graph, never one point twice
(identical points prune each other out of their neighbours' lists: bench/FINDINGS.md, issue 41);
the move is far below anything a similarity decides, and a stored vector written back (a restore)
is written as it is."""

from __future__ import annotations

import numpy as np

from kenning.core import schema
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall_plan import RecallRequest
from kenning.runtime.embedding import Embedder
from kenning.store import Stored, vectors

TEXTS = [
    "The deploy script pushes the image to the registry and restarts the pods one by one.",
    "We pinned numpy below 2 because the old pandas wheels crash on import.",
    "Staging shares its Postgres with QA, so never run destructive migrations there.",
    "The flaky checkout test was a race on the cart cache; we added a lock.",
    "Use uv, not pip, for the service's virtualenv: the lock file is uv's.",
    "Feature flags live in LaunchDarkly; the old YAML flags are dead code.",
]
QUERIES = [
    "how do we ship a new build?",
    "why is numpy pinned",
    "can I run migrations on staging",
    "what fixed the flaky test",
    "which tool manages python environments",
    "where are feature flags configured",
]
ASKED = "should the service's virtualenv use uv or pip?"


def test_spread_moves_a_vector_a_thousandth_along_its_keys_own_direction(
    embedder: Embedder,
) -> None:
    embedded = [np.asarray(v, dtype=np.float64) for v in embedder.embed_many(TEXTS)]
    asked = [np.asarray(v, dtype=np.float64) for v in embedder.embed_many(QUERIES)]
    for i, v in enumerate(embedded):
        written = vectors.spread(f"kenning:mem:default:A{i}", v)
        other = vectors.spread(f"kenning:mem:default:B{i}", v)
        assert written.dtype == np.float32  # what the index's FLOAT32 field holds
        a, b = written.astype(np.float64), other.astype(np.float64)
        assert abs(float(np.linalg.norm(a)) - 1.0) < 1e-6
        # the same key gives the same bytes, another key other bytes
        assert vectors.spread(f"kenning:mem:default:A{i}", v).tobytes() == written.tobytes()
        assert written.tobytes() != other.tobytes()
        # each stays within 1e-6 of the model's vector in cosine distance ...
        unit = v / np.linalg.norm(v)
        assert 1.0 - float(a @ unit) < 1e-6
        # ... and the two copies are ~1e-6 apart: far above float32's rounding (~1e-7 on a
        # cosine of 384 components), so no engine sees them as a tie
        assert 3e-7 < 1.0 - float(a @ b) < 5e-6
        # a query's cosine moves by ~5e-5; nothing Kenning decides is that close to a threshold
        for q in asked:
            assert abs(float(q @ a) - float(q @ unit)) < 5e-4


def test_a_zero_vector_is_left_as_it_is_and_a_stored_one_is_written_as_it_is() -> None:
    zero = np.zeros(8, dtype=np.float32)
    assert vectors.spread("k", zero).tobytes() == zero.tobytes()
    raw = schema.vector_bytes(np.arange(8, dtype=np.float32))
    assert vectors.field_bytes("k", Stored(raw)) == raw  # a backup's bytes: never spread twice
    assert vectors.field_bytes("k", np.arange(8, dtype=np.float32)) != raw
    assert vectors.direction("k", 8).tobytes() == vectors.direction("k", 8).tobytes()
    assert vectors.direction("k", 8).tobytes() != vectors.direction("j", 8).tobytes()


def test_one_text_in_two_projects_is_stored_as_two_vectors_and_recalled_in_each(
    engine: Engine, embedder: Embedder
) -> None:
    text = TEXTS[4]
    keys = {
        project: engine.memories.remember(
            Draft(text, project=project), actor="t", allow_duplicate=True
        ).key
        for project in ("billing", "search")
    }
    engine.memories.remember(Draft(TEXTS[1], project="search"), actor="t")
    read = {p: engine.store.memories.read_vector(k) for p, k in keys.items()}
    held = {p: v for p, v in read.items() if v is not None}
    assert set(held) == {"billing", "search"}
    assert held["billing"].tobytes() != held["search"].tobytes()
    model = np.asarray(embedder.embed(text), dtype=np.float32)
    for project, key in keys.items():
        assert np.array_equal(held[project], vectors.spread(key, model))
        assert float(held[project] @ model) > 1 - 1e-5
    for project, key in keys.items():
        hits = engine.recaller.recall(RecallRequest(ASKED, projects=[project])).hits
        assert hits[0].memory.key == key
    both = engine.recaller.recall(RecallRequest(ASKED, top_k=5)).hits
    assert set(keys.values()) <= {h.memory.key for h in both}
