"""Faults on a local Valkey Cluster (kenning/ops/cluster.py), through the store's cluster layout.

- A primary killed (SIGKILL) under writes, with a replica: the replica takes over, writes resume,
  and every write acknowledged more than the replication window before the kill is there after
  (Valkey replicates asynchronously: what a primary acknowledged in its last moments may not have
  reached its replica; docs/cluster.md says how much). Units caught half-way are completed by the
  sweep.
- Slots moved to another shard (CLUSTER SETSLOT MIGRATING/IMPORTING + MIGRATE) while the engine
  remembers: every acknowledged memory is there after, the index counts each once, and recall
  finds them.
- A shard down without a replica: a write to it fails with a typed error naming the node, writes
  to the other shards go on, and a search fails instead of answering from the shards left.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kenning.core.errors import BackendUnavailable, KenningError
from kenning.core.query import Search
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.cluster import LocalCluster
from kenning.runtime.embedding import Embedder
from kenning.store import AuditEvent, SlotMover, Store, Unit, connect, slots
from tests.conftest import cluster_module, make_settings

WINDOW = 1.0  # seconds before the kill whose acknowledged writes may be lost (async replication)

pytestmark = pytest.mark.cluster


def _cluster(tmp_path: Path, replicas: int) -> LocalCluster:
    return LocalCluster(
        tmp_path, cluster_module(), shards=3, replicas=replicas, node_timeout_ms=2000
    )


def _store(cluster: LocalCluster, tmp_path: Path) -> tuple[Settings, Store]:
    settings = make_settings(tmp_path, 6390, key_prefix="f:", valkey_cluster=cluster.spec)
    return settings, Store(connect(settings), settings.key_prefix)


def _write(store: Store, key: str) -> None:
    event = AuditEvent(actor="writer", action="write", key=key, at=time.time())
    if not store.units.commit(Unit([event]).hset(key, {"v": key})).applied:
        raise AssertionError(f"{key} not applied")


class Writer(threading.Thread):
    """Writes record after record, noting when each was acknowledged."""

    def __init__(self, store: Store) -> None:
        super().__init__(daemon=True)
        self.store, self.stop = store, threading.Event()
        self.acked: dict[str, float] = {}
        self.failed = 0

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            key = f"f:rec:{i}"
            i += 1
            try:
                _write(self.store, key)
            except KenningError:
                self.failed += 1
                time.sleep(0.05)
                continue
            self.acked[key] = time.time()


def _shard_of(cluster: LocalCluster, key: str) -> int:
    """The port of the primary that serves ``key`` (slots cut in equal ranges at forming)."""
    at = slots.slot(key)
    ranges = [(low, high) for low, high in _ranges(cluster.shards)]
    return cluster.ports[next(i for i, (low, high) in enumerate(ranges) if low <= at <= high)]


def _ranges(shards: int) -> list[tuple[int, int]]:
    from kenning.store.cluster_admin import ranges

    return ranges(shards)


@pytest.fixture
def with_replicas(tmp_path: Path) -> Iterator[LocalCluster]:
    with _cluster(tmp_path, replicas=1) as formed:
        yield formed


@pytest.fixture
def without_replicas(tmp_path: Path) -> Iterator[LocalCluster]:
    with _cluster(tmp_path, replicas=0) as formed:
        yield formed


def test_a_primary_killed_under_writes_fails_over_and_keeps_what_it_acknowledged(
    with_replicas: LocalCluster, tmp_path: Path
) -> None:
    _, store = _store(with_replicas, tmp_path)
    writer = Writer(store)
    writer.start()
    time.sleep(3.0)
    victim = with_replicas.ports[1]
    killed_at = time.time()
    with_replicas.kill(victim)
    time.sleep(8.0)  # the replica is promoted after the node timeout (2 s) and an election
    before = len(writer.acked)
    time.sleep(2.0)
    writer.stop.set()
    writer.join(10)
    assert len(writer.acked) > before  # writes resumed after the failover, on every shard
    on_victim = [k for k, t in writer.acked.items() if _shard_of(with_replicas, k) == victim]
    early = [k for k in on_victim if writer.acked[k] < killed_at - WINDOW]
    assert len(early) > 20  # positive control: the killed shard took writes before the kill
    assert [k for k in early if not store.client.exists(k)] == []
    later = [k for k in on_victim if writer.acked[k] > killed_at + 1]
    assert later  # the promoted replica serves the killed primary's slots
    store.units.repair(grace=0)  # type: ignore[attr-defined]
    kept = {e.key for e in store.audit.recent(limit=100_000)}
    assert [k for k in early if k not in kept] == []  # and their audit events
    store.client.close()  # type: ignore[no-untyped-call]


def test_a_shard_down_without_replica_fails_loudly_naming_the_node(
    without_replicas: LocalCluster, tmp_path: Path
) -> None:
    _, store = _store(without_replicas, tmp_path)
    victim = without_replicas.ports[2]
    keys = [f"f:rec:{i}" for i in range(60)]
    down = [k for k in keys if _shard_of(without_replicas, k) == victim]
    up = [k for k in keys if _shard_of(without_replicas, k) != victim]
    assert down
    assert up
    without_replicas.kill(victim)
    with pytest.raises(BackendUnavailable) as caught:
        _write(store, down[0])
    assert str(victim) in caught.value.message
    _write(store, up[0])  # the shards left still take writes whose unit stays on them
    store.client.close()  # type: ignore[no-untyped-call]


class Rememberer(threading.Thread):
    """Remembers distinct notes through the engine, noting each key acknowledged and when."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(daemon=True)
        self.engine, self.stop = engine, threading.Event()
        self.acked: dict[str, tuple[float, str]] = {}
        self.failed: list[str] = []

    def run(self) -> None:
        i = 0
        while not self.stop.is_set():
            words = NOTE.format(i=i, item=ITEMS[i % len(ITEMS)], n=i * 7 % 97)
            i += 1
            try:
                key = self.engine.memories.remember(
                    Draft(words, project="moving"), actor="writer"
                ).key
            except KenningError as exc:
                self.failed.append(exc.message)
                continue
            self.acked[key] = (time.time(), words)


NOTE = "Ticket {i}: the {item} job on host {n} needs a restart after each deploy."
ITEMS = ("billing", "search", "mailer", "thumbnail", "ledger", "export", "sync", "report")
MOVED = range(0, 1000)  # the slots moved from the first shard to the second, about 6%


def test_slots_moved_during_writes_lose_nothing_and_recall_agrees(
    without_replicas: LocalCluster, tmp_path: Path, embedder: Embedder
) -> None:
    settings, _ = _store(without_replicas, tmp_path)
    engine = Engine.open(settings, connect(settings), embedder)
    writer = Rememberer(engine)
    writer.start()
    time.sleep(2.0)
    mover = SlotMover(without_replicas.admin, without_replicas.ports)
    began = time.time()
    moved = sum(mover.move(s, without_replicas.ports[0], without_replicas.ports[1]) for s in MOVED)
    ended = time.time()
    time.sleep(1.0)
    writer.stop.set()
    writer.join(30)
    assert moved > 0  # positive control: the moved slots held keys
    during = [k for k, (t, _) in writer.acked.items() if began <= t <= ended]
    assert any(slots.slot(k) in MOVED for k in during)  # writes landed in the moving slots
    store = engine.store
    assert [k for k in writer.acked if not store.memories.exists(k)] == []
    counted = store.memories.count(Search(index=engine.ctx.index, namespaces=("knowledge",)))
    assert counted == len(writer.acked)
    sample = list(writer.acked.items())[:: max(1, len(writer.acked) // 8)]
    for key, (_, words) in sample:
        found = engine.recaller.recall(RecallRequest(words, projects=["moving"], actor="t"))
        assert key in [h.memory.key for h in found.hits]
    engine.close()
