"""Kenning on a real Valkey Cluster: three shards, valkey-search in coordinator mode
(tests/conftest.py ``cluster``; kenning/ops/cluster.py).

The engine writes and reads through the cluster client, each unit split by slot
(kenning/store/cluster_unit.py); a unit whose second half was lost is completed by the sweep; the
audit partitions read back as one log; a shard down fails loudly, naming the node.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import valkey

from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.cluster import LocalCluster
from kenning.runtime.embedding import Embedder
from kenning.store import AuditEvent, Store, Unit, connect, slots
from kenning.store.cluster_unit import ClusterUnits, Repaired
from tests.conftest import make_settings

pytestmark = pytest.mark.cluster


@pytest.fixture
def on_cluster(settings: Settings, cluster: LocalCluster) -> Settings:
    return make_settings(
        settings.data_dir,
        settings.valkey_port,
        key_prefix=settings.key_prefix,
        valkey_cluster=cluster.spec,
    )


@pytest.fixture
def cluster_engine(
    on_cluster: Settings, embedder: Embedder, clock: ManualClock
) -> Iterator[Engine]:
    conn = connect(on_cluster)
    engine = Engine.open(on_cluster, conn, embedder, clock=clock)
    yield engine
    engine.close()
    _wipe(conn, on_cluster.key_prefix)
    conn.close()  # type: ignore[no-untyped-call]


def _wipe(conn: object, prefix: str) -> None:
    from kenning.store import indexes

    indexes.drop(conn, prefix)  # type: ignore[arg-type]
    for key in list(conn.scan_iter(match=f"{prefix}*", count=1000)):  # type: ignore[attr-defined]
        conn.delete(key)  # type: ignore[attr-defined]


TEXTS = [
    "The billing service retries a failed charge three times before giving up.",
    "Deploys to staging run from the release branch every weekday at noon.",
    "The search page caches results in Valkey for ten minutes.",
    "Alembic migrations must be reviewed by the data team before merging.",
    "The mobile app reads feature flags from the config service at start-up.",
    "Log lines are shipped to the collector over TCP, never UDP.",
]


def test_the_engine_writes_recalls_and_audits_across_three_shards(
    cluster_engine: Engine,
) -> None:
    store = cluster_engine.store
    assert store.cluster
    keys = [
        cluster_engine.memories.remember(Draft(t, project="alpha"), actor="agent").key
        for t in TEXTS
    ]
    shards = {slots.slot(k) * 3 // slots.SLOTS for k in keys}
    assert len(shards) >= 2  # the memories live on more than one shard
    found = cluster_engine.recaller.recall(
        RecallRequest("how often does billing retry a charge?", projects=["alpha"], actor="agent")
    )
    assert found.hits, (found.weak, found.notes, found.examined, found.confidence)
    assert found.hits[0].memory.key == keys[0]
    cluster_engine.memories.update(keys[2], TEXTS[2] + " Then it refetches.", actor="ana")
    history = cluster_engine.history.history(keys[2])
    assert [e.action for e in history.events] == ["remember", "update"]
    log = cluster_engine.history.audit_log(limit=50)
    assert [e.key for e in log.events if e.action == "remember"] == keys[::-1]
    assert log.events[0].action == "update"
    assert store.repair().completed == ()  # every unit finished: nothing pending
    report = cluster_engine.maintenance.run()  # the scheduled pass runs the sweep on a cluster
    assert report.units == Repaired()
    assert report.public()["units"] == {"completed": (), "blocked": (), "waiting": 0}


def _audit(key: str) -> AuditEvent:
    return AuditEvent(actor="agent", action="test", key=key, reason="cluster repair", at=1.0)


def test_the_sweep_completes_a_unit_whose_second_half_was_lost(on_cluster: Settings) -> None:
    conn = connect(on_cluster)
    store = Store(conn, on_cluster.key_prefix)
    units = store.units
    assert isinstance(units, ClusterUnits)
    prefix = on_cluster.key_prefix
    first, second, names = f"{prefix}rec:one", f"{prefix}rec:two", f"{prefix}{{set}}:names"
    assert len({slots.slot(k) for k in (first, second, names)}) == 3
    unit = Unit([_audit(first), _audit(second)])
    unit.hset(first, {"v": "1"}).hset(second, {"v": "2"}).sadd(names, "one")
    split = units.split(unit)
    assert len(split.rest) >= 2
    # the first half only, as when the writer dies right after it
    assert units.send([(split.home, "")])[0][0] == 1
    assert conn.hgetall(first) == {b"v": b"1"}
    assert conn.exists(second) == 0
    assert conn.sismember(names, "one") == 0
    assert [e.key for e in store.audit.recent(limit=10)] == []
    assert [e.action for e in store.audit.history(first)] == ["test"]
    assert store.audit.history(second) == []

    repaired = store.repair()  # too young: its writer may still be sending the rest
    assert repaired.completed == ()
    assert repaired.waiting == 1
    repaired = units.repair(grace=0)
    assert repaired.completed == (split.uid,)
    assert repaired.blocked == ()
    assert conn.hgetall(second) == {b"v": b"2"}
    assert conn.sismember(names, "one") == 1
    log = store.audit.recent(limit=10)
    assert sorted(e.key for e in log) == sorted([first, second])
    assert [e.action for e in store.audit.history(second)] == ["test"]
    # sent again, every piece is known done: nothing doubles
    assert {r[0] for r in units.send([(p, split.uid) for p in split.rest])} == {2}
    assert len(store.audit.recent(limit=10)) == 2
    assert units.repair(grace=0) == Repaired()
    _wipe(conn, prefix)
    conn.close()  # type: ignore[no-untyped-call]


def test_a_gate_on_another_slot_that_changed_leaves_the_unit_blocked(
    on_cluster: Settings,
) -> None:
    conn = connect(on_cluster)
    store = Store(conn, on_cluster.key_prefix)
    units = store.units
    assert isinstance(units, ClusterUnits)
    prefix = on_cluster.key_prefix
    first, second = f"{prefix}rec:one", f"{prefix}rec:two"
    conn.hset(first, mapping={"state": "open"})
    conn.hset(second, mapping={"state": "open"})
    decided = Unit([_audit(first)])
    decided.patch(first, {"state": "won"}, expect={"state": "open"})
    decided.patch(second, {"state": "lost"}, expect={"state": "open"})
    split = units.split(decided)
    assert units.send([(split.home, "")])[0][0] == 1
    conn.hset(second, "state", "reopened")  # another writer, between the halves
    repaired = units.repair(grace=0)
    assert repaired.blocked == (split.uid,)
    assert repaired.completed == ()
    assert _state(conn, second) == "reopened"  # never forced
    # the control: the same decision committed whole, its gates holding, applies on both slots
    conn.hset(first, "state", "open")
    conn.hset(second, "state", "open")
    again = Unit([_audit(first)])
    again.patch(first, {"state": "won"}, expect={"state": "open"})
    again.patch(second, {"state": "lost"}, expect={"state": "open"})
    assert units.commit(again).applied
    assert _state(conn, second) == "lost"
    # and refused whole when the other slot's gate fails before anything is written
    refused = Unit([_audit(first)])
    refused.patch(first, {"state": "x"}, expect={"state": "won"})
    refused.patch(second, {"state": "y"}, expect={"state": "open"})
    assert not units.commit(refused).applied
    assert _state(conn, first) == "won"
    _wipe(conn, prefix)
    conn.close()  # type: ignore[no-untyped-call]


def _state(conn: valkey.Valkey, key: str) -> str:
    raw: Any = conn.hget(key, "state")
    return bytes(raw).decode()
