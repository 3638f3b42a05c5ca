"""Duplicate clusters from stored vectors (no re-embedding, no cap) and merging them."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest
import valkey

from kenning.core.clock import ManualClock
from kenning.core.models import Memory
from kenning.core.settings import Settings
from kenning.curation.duplicates import clusters
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.runtime.embedding import Embedder, Vector
from kenning.store import AuditEvent
from tests.margins import assert_pair

# a direct store write records itself too
SETUP = [AuditEvent(actor="test", action="test_setup", key="")]


@dataclass
class CountingEmbedder:
    """The real model, counting how often it is asked (to prove find_duplicates never embeds)."""

    inner: Embedder
    calls: list[int] = field(default_factory=list)
    model_name: str = ""
    dimension: int = 0

    def __post_init__(self) -> None:
        self.model_name = self.inner.model_name
        self.dimension = self.inner.dimension

    def embed(self, text: str) -> Vector:
        self.calls.append(1)
        return self.inner.embed(text)

    def embed_many(self, texts: list[str]) -> list[Vector]:
        self.calls.append(len(texts))
        return self.inner.embed_many(texts)


def _unit(seed: int, dim: int = 384) -> Vector:
    vector = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return vector / np.linalg.norm(vector)


def test_clusters_link_pairs_above_the_threshold() -> None:
    a, b = _unit(1), _unit(2)
    near_a = a + 0.01 * b
    matrix = np.vstack([a, b, near_a / np.linalg.norm(near_a), _unit(3)])
    (group,) = clusters(matrix, 0.95)
    assert group[0] == [0, 2]
    assert group[1] >= 0.95
    assert clusters(matrix, 0.99999) == []


def test_find_uses_stored_vectors_and_examines_everything(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    counting = CountingEmbedder(embedder)
    engine = Engine.open(settings, client, counting, clock=clock)
    base = _unit(7)
    for i in range(1_203):  # more than two search pages: nothing may be capped
        vector = base if i in (0, 600, 1_202) else _unit(100 + i)
        key = engine.store.memories.new_key("knowledge", f"01H{i:023d}")
        engine.store.memories.write(
            Memory(
                key=key,
                content=f"memory {i}",
                namespace="knowledge",
                project="bulk",
                created_at=clock.now() + i,
                updated_at=clock.now(),
            ),
            vector,
            SETUP,
        )
    before = len(counting.calls)
    report = engine.duplicates.find("knowledge", project="bulk")
    assert len(counting.calls) == before  # nothing was re-embedded
    assert report.examined == 1_203
    assert report.cluster_count == 1
    members = [m["key"].rsplit(":", 1)[1] for m in report.clusters[0].members]
    assert members == [f"01H{i:023d}" for i in (0, 600, 1_202)]


@pytest.mark.both_backends
def test_duplicates_are_per_project_and_merge_archives_with_reason(
    engine: Engine, embedder: Embedder
) -> None:
    texts = [
        "Run the linter with `make lint` before pushing",
        "Run the linter with make lint before you push",
        "Before pushing, run the linter with `make lint`",
    ]
    for a, b in ((0, 1), (1, 2), (0, 2)):
        assert_pair(embedder, texts[a], texts[b], above=0.8)  # 0.90, 0.91, 0.98
    keys = [
        engine.memories.remember(
            Draft(t, project="p", tags=[f"t{i}"]), actor="a", allow_duplicate=True
        ).key
        for i, t in enumerate(texts)
    ]
    elsewhere = engine.memories.remember(
        Draft(texts[0], project="q"), actor="a", allow_duplicate=True
    ).key
    report = engine.duplicates.find("knowledge", threshold=0.8)
    assert report.examined == 4
    (cluster,) = report.clusters
    assert sorted(m["key"] for m in cluster.members) == sorted(keys)
    assert elsewhere not in [m["key"] for m in cluster.members]

    merged = engine.duplicates.merge(keys[0], keys[1:], "same advice", actor="alice")
    assert merged.archived == keys[1:]
    for key in keys[1:]:
        gone = engine.memories.get(key)
        assert (gone.state, gone.state_reason) == (
            "archived",
            f"duplicate of {keys[0]}: same advice",
        )
    assert engine.memories.get(keys[0]).tags == ("t0", "t1", "t2")
    assert engine.duplicates.find("knowledge", threshold=0.8).cluster_count == 0
    (event,) = [e for e in engine.store.audit.history(keys[0]) if e.action == "merge_duplicates"]
    assert (event.actor, event.details["archived"], event.details["already_archived"]) == (
        "alice",
        keys[1:],
        [],
    )
    # already archived by the first merge
    again = engine.duplicates.merge(keys[0], keys[1:2], None, actor="bob")
    assert (again.archived, again.already_archived) == ([], keys[1:2])


@pytest.mark.both_backends
def test_opposite_statements_are_never_a_duplicate_cluster(
    engine: Engine, embedder: Embedder
) -> None:
    texts = [
        "Use pickle for caching",
        "Do not use pickle for caching",
        "Use pickle for caching please",
    ]
    assert_pair(embedder, texts[0], texts[2], above=0.85)  # about 0.95: the real duplicate pair
    assert_pair(embedder, texts[0], texts[1], above=0.85)  # about 0.95-0.97: as close, but opposite
    keys = [
        engine.memories.remember(Draft(t, project="p"), actor="a", allow_duplicate=True).key
        for t in texts
    ]
    stored = [engine.store.memories.read_vector(k) for k in keys]
    vectors = [v for v in stored if v is not None]
    assert len(vectors) == 3
    (cluster,) = engine.duplicates.find("knowledge", threshold=0.85).clusters
    # positive control
    assert sorted(m["key"] for m in cluster.members) == sorted([keys[0], keys[2]])
    assert cluster.contains_opposites is False


def test_a_vetoed_link_still_chains_through_a_third_member() -> None:
    a, b = _unit(1), _unit(2)
    middle = (a + b) / np.linalg.norm(a + b)
    matrix = np.vstack([a, middle, b])
    assert float(np.dot(a, b)) < 0.6  # the ends are not linked themselves
    (group,) = clusters(matrix, 0.6, lambda i, j: {i, j} != {0, 2})
    assert group[0] == [0, 1, 2]  # hence contains_opposites: such a group is never auto-merged
