"""The store against the real engine: each FT.* quirk in docs/valkey-search.md has its test here."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import valkey

from kenning.core import query, schema
from kenning.core.models import Memory
from kenning.core.query import Search
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.store import AuditEvent, Near, vectors
from kenning.store import indexes as index_admin

# a direct store write records itself too
SETUP = [AuditEvent(actor="test", action="test_setup", key="")]

TEXTS = [
    "Redis streams keep the audit log",
    "Use pytest fixtures for the Valkey server",
    "HNSW parameters M=16 and EF_CONSTRUCTION=200",
    "Cosine distance is 1 minus similarity",
    "Ruff replaces flake8 and isort",
    "Mypy strict mode on the tests too",
    "Docker is not available on this machine",
    "Chromium runs headless for browser tests",
]


def _seed(engine: Engine) -> list[str]:
    return [engine.memories.remember(Draft(t, project="q"), actor="t").key for t in TEXTS]


def _knn(engine: Engine, text: str, k: int, *clauses: str) -> list[float]:
    vector = schema.vector_bytes(engine.ctx.embedder.embed(text))
    search = Search(
        index=engine.ctx.index,
        namespaces=("knowledge",),
        clauses=clauses,
        knn=k,
        vector=vector,
        ef_runtime=64,
        return_fields=("created_at", "distance"),
        limit=k,
    )
    return [h.distance for h in engine.store.memories.search(search).hits if h.distance is not None]


def test_knn_hits_come_back_sorted_by_distance(engine: Engine) -> None:
    _seed(engine)
    distances = _knn(engine, "testing tools for python", 8)
    assert len(distances) == 8
    assert distances == sorted(distances)


def test_nearest_reads_only_the_rows_within_the_distance_and_matches_a_full_search(
    engine: Engine,
) -> None:
    _seed(engine)
    vector = schema.vector_bytes(engine.ctx.embedder.embed("testing tools for python"))
    full = Search(
        index=engine.ctx.index,
        namespaces=("knowledge",),
        knn=8,
        vector=vector,
        ef_runtime=64,
        return_fields=(*schema.FIELD_NAMES, "distance"),
        limit=8,
    )
    everything = engine.store.memories.search(full).hits
    distances = [h.distance for h in everything if h.distance is not None]
    assert len(distances) == 8
    cut = (distances[2] + distances[3]) / 2  # between the 3rd and 4th nearest
    assert distances[3] > cut  # positive control: farther rows exist
    (near,) = engine.store.memories.nearest([Near(full, max_distance=cut)])
    assert [(h.memory, h.distance) for h in near.hits] == [
        (h.memory, h.distance) for h in everything[:3]
    ]
    assert near.total == 8
    assert engine.store.memories.nearest([]) == []
    (ruff,) = engine.store.memories.nearest(
        [Near(full, fields=("content",), accept=lambda row: "Ruff" in row["content"])]
    )
    # read in full
    assert [h.memory.content for h in ruff.hits] == ["Ruff replaces flake8 and isort"]
    assert ruff.hits[0].memory.project == "q"


def test_nearest_runs_searches_with_different_rules_in_the_same_round_trips(engine: Engine) -> None:
    """A recall's candidates (a distance cut) and identifier searches (a content test) share both
    round trips, and each keeps its own rule: the answer equals the two asked apart."""
    _seed(engine)
    vector = schema.vector_bytes(engine.ctx.embedder.embed("testing tools for python"))
    full = Search(
        index=engine.ctx.index,
        namespaces=("knowledge",),
        knn=8,
        vector=vector,
        ef_runtime=64,
        limit=8,
    )
    distances = _knn(engine, "testing tools for python", 8)
    assert len(distances) == 8
    cut = (distances[1] + distances[2]) / 2  # the two nearest only
    near = Near(full, max_distance=cut)
    mypy = Near(full, fields=("content",), accept=lambda row: "Mypy" in row["content"])
    apart = engine.store.memories.nearest([near]) + engine.store.memories.nearest([mypy])
    pipelines: list[int] = []
    client = engine.store.memories.client
    real = client.pipeline

    def counted(*args: Any, **kwargs: Any) -> Any:
        pipelines.append(1)
        return real(*args, **kwargs)

    client.pipeline = counted  # type: ignore[method-assign]
    try:
        together = engine.store.memories.nearest([near, mypy])
    finally:
        del client.pipeline
    assert len(pipelines) == 2  # the KNNs, then the rows kept
    assert [len(r.hits) for r in together] == [2, 1]  # positive control: both rules kept something
    assert together == apart
    assert together[1].hits[0].memory.content == "Mypy strict mode on the tests too"


def test_return_list_keeps_the_vector_out_of_replies(engine: Engine, client: valkey.Valkey) -> None:
    _seed(engine)
    search = Search(
        index=engine.ctx.index, namespaces=("knowledge",), return_fields=schema.FIELD_NAMES, limit=3
    )
    reply = client.execute_command(*search.args())  # type: ignore[no-untyped-call]
    assert reply[0] == len(TEXTS)
    assert all(b"vector" not in row for row in reply[2::2])
    assert all(b"content" in row for row in reply[2::2])


def test_write_is_searchable_immediately(engine: Engine) -> None:
    key = engine.memories.remember(
        Draft("Read your writes: HSET returns after indexing"), actor="t"
    ).key
    search = Search(
        index=engine.ctx.index,
        namespaces=("knowledge",),
        clauses=(query.text_any("content", ["indexing"]),),
        return_fields=("created_at",),
        limit=5,
    )
    assert [h.memory.key for h in engine.store.memories.search(search).hits] == [key]


def test_rewrite_drops_the_fields_a_memory_no_longer_has(engine: Engine) -> None:
    key = engine.memories.remember(
        Draft("The outage review is on Friday", event_date=1_000.0, title="review"), actor="t"
    ).key
    dated = Search(
        index=engine.ctx.index,
        namespaces=("knowledge",),
        clauses=(query.numeric("event_date", 0, 2_000),),
        return_fields=("created_at",),
        limit=5,
    )
    # positive control
    assert [h.memory.key for h in engine.store.memories.search(dated).hits] == [key]
    memory = engine.store.memories.read(key)
    assert memory is not None
    engine.store.memories.write(
        replace(memory, event_date=None, title=None), engine.store.memories.read_vector(key), SETUP
    )
    assert engine.store.memories.read(key) == replace(memory, event_date=None, title=None)
    assert engine.store.memories.search(dated).hits == ()


def test_count_with_limit_zero_and_negation(engine: Engine) -> None:
    keys = _seed(engine)
    engine.store.memories.write(
        replace(engine.memories.get(keys[0]), state="archived"), None, SETUP
    )
    index = engine.ctx.index
    assert engine.store.memories.count(Search(index=index)) == len(TEXTS)
    assert (
        engine.store.memories.count(
            Search(index=index, clauses=(query.not_tag("state", ["archived"]),))
        )
        == 7
    )
    assert (
        engine.store.memories.count(
            Search(index=index, clauses=(query.tag("state", ["archived"]),))
        )
        == 1
    )


def test_sortby_numeric_descending(engine: Engine) -> None:
    keys = _seed(engine)
    for n, key in enumerate(keys):
        engine.store.memories.write(
            replace(engine.memories.get(key), created_at=1000.0 + n), None, SETUP
        )
    search = Search(
        index=engine.ctx.index,
        namespaces=("knowledge",),
        sort_by="created_at",
        descending=True,
        return_fields=("created_at",),
        limit=3,
    )
    assert [h.memory.key for h in engine.store.memories.search(search).hits] == keys[::-1][:3]


def test_numeric_range_and_missing_numeric(engine: Engine) -> None:
    keys = _seed(engine)
    engine.store.memories.write(
        replace(engine.memories.get(keys[1]), expires_at=500.0), None, SETUP
    )
    search = Search(
        index=engine.ctx.index,
        namespaces=("knowledge",),
        clauses=(query.numeric("expires_at", None, 1000.0),),
        return_fields=("created_at",),
        limit=10,
    )
    assert [h.memory.key for h in engine.store.memories.search(search).hits] == [keys[1]]


def test_phantom_index_entries_are_dropped_and_counted(
    engine: Engine, client: valkey.Valkey
) -> None:
    keys = _seed(engine)
    memory: Memory = engine.memories.get(keys[0])
    assert memory.content == TEXTS[0]
    client.delete(keys[0])
    search = Search(
        index=engine.ctx.index,
        namespaces=("knowledge",),
        return_fields=schema.FIELD_NAMES,
        limit=20,
    )
    result = engine.store.memories.search(search)
    assert keys[0] not in {h.memory.key for h in result.hits}
    assert len(result.hits) == len(TEXTS) - 1


def test_ft_info_is_parsed_from_either_module_shape() -> None:
    redisearch = [
        "index_name",
        "i",
        "num_docs",
        "12",
        "indexing",
        0,
        "percent_indexed",
        "1",
        "attributes",
        [["identifier", "content", "attribute", "content", "type", "TEXT"]],
    ]
    valkey_search = [
        b"index_name",
        b"i",
        b"num_docs",
        12,
        b"backfill_in_progress",
        b"1",
        b"backfill_complete_percent",
        b"40.000000",
        b"attributes",
        [],
    ]
    a = index_admin.parse_info("i", redisearch)
    b = index_admin.parse_info("i", valkey_search)
    assert (a.num_docs, a.indexing, a.percent_indexed, a.attributes) == (
        12,
        False,
        1.0,
        ("content",),
    )
    assert (b.num_docs, b.indexing, b.percent_indexed) == (12, True, 0.4)


def test_vector_round_trips_as_little_endian_float32(engine: Engine) -> None:
    key = engine.memories.remember(Draft("vectors are FLOAT32"), actor="t").key
    stored = engine.store.memories.read_vector(key)
    expected = vectors.spread(key, engine.ctx.embedder.embed("vectors are FLOAT32"))
    assert stored is not None
    assert stored.dtype == np.float32
    assert np.allclose(stored, expected, atol=1e-6)


def test_update_sets_and_removes_fields_atomically_and_never_resurrects(engine: Engine) -> None:
    keys = _seed(engine)
    store = engine.store.memories
    assert store.update(
        keys[0], {"valid_to": 10.0, "superseded_by": keys[1], "recall_count": 3}, SETUP
    )
    changed = engine.memories.get(keys[0])
    assert (changed.valid_to, changed.superseded_by, changed.recall_count) == (10.0, keys[1], 3)
    assert store.update(keys[0], {"valid_to": None, "superseded_by": None}, SETUP)
    cleared = engine.memories.get(keys[0])
    assert (cleared.valid_to, cleared.superseded_by, cleared.content) == (None, None, TEXTS[0])
    store.delete(keys[0], SETUP)
    assert store.update(keys[0], {"state": "active"}, SETUP) is False
    assert store.read(keys[0]) is None
