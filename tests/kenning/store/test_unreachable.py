"""Memories the search graph does not reach (kenning/store/unreachable.py): the self-check lists
what its repair leaves unreachable, and every KNN the graph answers on that index scores those
memories exactly, so a stored memory is never missed at the default depth.

A graph a test can build in seconds misses real memories only at a shallow depth: 5,000 random
unit vectors (seeded; no model), written through the store, searched at EF_RUNTIME 10, leave 25-46
memories unreachable after the check's repair on both engines (66-96 before it; measured with
this file's store). That depth is what these tests configure (KENNING_EF_RUNTIME=10, a setting a
user may choose); the look-up does not depend on it. A cluster splits the 5,000 into three graphs
that small graphs do not miss, so the graph-miss tests hold on one server; the list's own rules
(a listed memory is returned once, a shared ``created_at``, the filter) run in every pass.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import valkey
from ulid import ULID

from kenning.core import query, schema
from kenning.core.clock import ManualClock
from kenning.core.models import Memory
from kenning.core.query import Search
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.runtime.embedding import Embedder
from kenning.store import AuditEvent, Near, graph_check, unreachable
from kenning_cli.main import main
from tests.conftest import point_cli

N = 5_000
EF = 10
PROJECTS = ("alpha", "beta", "gamma", "delta", "omega")
SEED = 11


def _random_store(engine: Engine) -> dict[str, str]:
    """N memories with seeded random unit vectors, each its own ``created_at``, written as the
    store writes an import (batched units); each key's project."""
    rng = np.random.default_rng(SEED)
    matrix = rng.standard_normal((N, 384)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    projects: dict[str, str] = {}
    start = engine.ctx.clock.now()
    for first in range(0, N, 250):
        rows = []
        for i in range(first, min(N, first + 250)):
            key = engine.store.memories.new_key("knowledge", str(ULID()))
            at = start + i
            memory = Memory(
                key=key,
                content=f"synthetic note {i} for the graph test",
                namespace="knowledge",
                project=PROJECTS[i % len(PROJECTS)],
                actor="t",
                created_at=at,
                updated_at=at,
            )
            rows.append((memory, matrix[i], [AuditEvent("t", "remember", key, at=at)]))
            projects[key] = memory.project
        engine.store.memories.write_many(rows)
    return projects


@pytest.fixture
def shallow(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> Iterator[tuple[Engine, dict[str, str]]]:
    """An engine searching at EF_RUNTIME 10 over the random store."""
    engine = Engine.open(
        settings.model_copy(update={"ef_runtime": EF}), client, embedder, clock=clock
    )
    try:
        yield engine, _random_store(engine)
    finally:
        engine.close()


def _knn(engine: Engine, raw: bytes, *clauses: str) -> Search:
    """The self-check's KNN (k 10 at the store's depth), with ``clauses`` and two fields."""
    return Search(
        index=engine.ctx.index,
        clauses=clauses,
        knn=10,
        vector=raw,
        ef_runtime=EF,
        return_fields=("created_at", "project"),
        limit=10,
    )


def _every_way(engine: Engine, search: Search) -> list[list[str]]:
    """The keys ``search`` returns through each of the store's KNN paths: ``nearest`` (recall),
    ``search``, ``search_many`` and a ``Batch`` (remember), nearest first."""
    memories = engine.store.memories
    batch = memories.batch([Near(search)])
    pipe: Any = engine.store.client.pipeline(transaction=False)
    batch.queue(pipe)
    results = [
        memories.nearest([Near(search)])[0],
        memories.search(search),
        memories.search_many([search])[0],
        batch.finish(pipe.execute())[0],
    ]
    return [[h.memory.key for h in r.hits] for r in results]


@pytest.mark.single_server
def test_what_the_repair_leaves_unreachable_is_found_by_every_knn(
    shallow: tuple[Engine, dict[str, str]],
) -> None:
    engine, projects = shallow
    client, index = engine.store.client, engine.ctx.index

    done = engine.maintenance.graph.run(actor="t")

    # the positive control: the graph really misses memories at this depth after the repair
    assert done.checked == N
    assert done.still_missed > 0, done.describe()
    assert (done.exact, done.unfound) == (done.still_missed, 0)
    assert f"{done.exact:,} the graph does not reach, found by exact search" in done.describe()
    listed = unreachable.read(client, engine.store.prefix)
    assert listed.index == index
    assert len(listed.created) == done.still_missed
    assert set(done.missed_keys) <= set(listed.created)
    rows = [(key, _raw(client, key)) for key in listed.created]
    assert graph_check.missed(client, index, rows, EF) == rows  # the bare KNN misses each one
    for key, raw in rows[:8]:
        every = _every_way(engine, _knn(engine, raw))
        assert [found[0] for found in every] == [key] * 4, key
        assert all(len(found) == 10 and found.count(key) == 1 for found in every)
        own = query.tag("project", [projects[key]])
        other = query.tag("project", [p for p in PROJECTS if p != projects[key]][:1])
        assert [found[0] for found in _every_way(engine, _knn(engine, raw, own))] == [key] * 4
        elsewhere = _every_way(engine, _knn(engine, raw, other))
        assert all(len(found) == 10 for found in elsewhere)  # answered: 10 of the other project
        assert all(key not in found for found in elsewhere)


@pytest.mark.single_server
def test_a_check_that_reaches_everything_empties_the_list_and_a_forgotten_one_is_not_returned(
    shallow: tuple[Engine, dict[str, str]],
) -> None:
    engine, _ = shallow
    client = engine.store.client
    done = engine.maintenance.graph.run(actor="t")
    listed = list(unreachable.read(client, engine.store.prefix).created)
    assert done.still_missed == len(listed) > 1
    gone, kept = listed[0], listed[1]
    raw = _raw(client, gone)
    assert _every_way(engine, _knn(engine, raw))[0][0] == gone  # found while it is there
    engine.memories.forget(gone, confirm=True, actor="t")
    assert all(gone not in found for found in _every_way(engine, _knn(engine, raw)))
    assert gone in unreachable.read(client, engine.store.prefix).created  # still listed

    deep = engine.store.check_graph(engine.ctx.index, ef=256, now=engine.ctx.clock.now())

    assert (deep.still_missed, deep.exact) == (0, 0)
    assert unreachable.read(client, engine.store.prefix).created == {}
    kept_raw = _raw(client, kept)
    deep_knn = Search(
        index=engine.ctx.index, knn=10, vector=kept_raw, ef_runtime=256, return_fields=("project",)
    )
    assert engine.store.memories.nearest([Near(deep_knn)])[0].hits[0].memory.key == kept


@pytest.mark.single_server
def test_reindex_check_and_doctor_say_what_exact_search_covers(
    shallow: tuple[Engine, dict[str, str]],
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    point_cli(monkeypatch, settings)
    monkeypatch.setenv("KENNING_EF_RUNTIME", str(EF))
    assert main(["reindex", "--check"]) == 0  # every memory found: the check passes
    line = capsys.readouterr().out
    assert f"self-check: {N - len(_listed(shallow[0])):,} of {N:,} reachable" in line
    assert "the graph does not reach, found by exact search (e.g. " in line
    assert "still unreachable" not in line
    assert main(["doctor", "--no-mcp", "--no-web"]) == 0
    doctor = capsys.readouterr().out
    assert "ok   search graph: self-check: " in doctor
    assert "found by exact search" in doctor


def _raw(client: valkey.Valkey, key: str) -> bytes:
    """A memory's stored vector bytes."""
    raw: Any = client.hget(key, schema.VECTOR_FIELD)
    assert isinstance(raw, bytes)
    return raw


def _listed(engine: Engine) -> dict[str, float]:
    return unreachable.read(engine.store.client, engine.store.prefix).created


def test_a_listed_memory_is_returned_once_and_the_pin_admits_only_the_listed(
    engine: Engine,
) -> None:
    """A memory listed while the graph does reach it (a re-insertion since, or another process's
    list) is returned once; a memory sharing its ``created_at`` but not listed is not added."""
    memories = engine.memories
    listed = memories.remember(Draft("The deploy runs on Fridays", project="ops"), actor="t").key
    twin_time = memories.remember(Draft("Lunch is at noon", project="ops"), actor="t").key
    other = memories.remember(Draft("Backups go to S3", project="ops"), actor="t").key
    client = engine.store.client
    assert client.hget(listed, "created_at") == client.hget(twin_time, "created_at")  # one clock
    raw = _raw(client, listed)
    before = _every_way(engine, _knn(engine, raw))
    assert before[0][:1] == [listed]  # the positive control: the graph reaches it
    assert unreachable.record(client, engine.store.prefix, engine.ctx.index, [listed]) == 1
    engine.store.memories.unreachable.forget()
    after = _every_way(engine, _knn(engine, raw))
    assert after == before  # once, and nothing the pin also admits (``twin_time``) added
    assert all(sorted(found) == sorted([listed, twin_time, other]) for found in after)
    assert unreachable.record(client, engine.store.prefix, engine.ctx.index, []) == 0
    assert _listed(engine) == {}


def test_a_list_of_another_index_is_not_applied(engine: Engine) -> None:
    key = engine.memories.remember(Draft("Tokens rotate monthly", project="ops"), actor="t").key
    client = engine.store.client
    unreachable.record(client, engine.store.prefix, "another-index", [key])
    register = unreachable.read(client, engine.store.prefix)
    raw = _raw(client, key)
    assert register.created.keys() == {key}
    assert not register.covers(_knn(engine, raw))
    assert register.covers(Search(index="another-index", knn=10, vector=raw))


def test_merged_puts_the_missed_rows_among_the_graphs_nearest_first_at_most_k() -> None:
    graph: list[tuple[str, float, dict[str, str]]] = [
        ("b", 0.2, {}),
        ("a", 0.1, {}),
        ("c", 0.3, {}),
    ]
    assert unreachable.merged(graph, [], 2) == graph  # nothing listed: as they came
    merged = unreachable.merged(graph, [("z", 0.05, {}), ("a", 0.1, {})], 3)
    assert [row[0] for row in merged] == ["z", "a", "b"]
    one: list[tuple[str, float, dict[str, str]]] = [("b", 0.2, {})]
    tied = unreachable.merged(one, [("a", 0.2, {})], None)
    assert [row[0] for row in tied] == ["a", "b"]  # ties by key, as an exact KNN orders them


def test_the_pin_is_the_search_s_own_filter_and_each_created_at() -> None:
    register = unreachable.Register("idx", {"k1": 1_800_000_000.5, "k2": 1_800_000_007.25})
    search = Search(
        index="idx", namespaces=("knowledge",), clauses=("@project:{ops}",), knn=25, vector=b"v"
    )
    pinned = register.pinned(search)
    assert pinned.knn is None
    assert pinned.return_fields == ("vector",)
    assert pinned.namespaces == ("knowledge",)
    assert pinned.clauses == (
        "@project:{ops}",
        "(@created_at:[1800000000.499 1800000000.501] | "
        "@created_at:[1800000007.249 1800000007.251])",
    )
    assert not unreachable.Register("idx", {}).covers(search)
    assert not register.covers(Search(index="idx", limit=5))  # not a KNN


def test_a_check_in_this_process_is_followed_at_once(engine: Engine) -> None:
    """The list a process read is kept up to a second (``REFRESH``); the check's own process
    reads the new one on its next KNN (``Store.check_graph`` forgets its copy)."""
    key = engine.memories.remember(Draft("Logs are kept for a week", project="ops"), actor="t").key
    seen = engine.store.memories.unreachable
    assert seen.current().created == {}
    unreachable.record(engine.store.client, engine.store.prefix, engine.ctx.index, [key])
    seen.forget()
    assert set(seen.current().created) == {key}
    engine.store.check_graph(engine.ctx.index, ef=256, now=engine.ctx.clock.now())
    assert seen.current().created == {}  # reachable: the check emptied the list
