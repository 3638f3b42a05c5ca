"""A one-server store moved into a 3-shard cluster by `kenning backup --vectors` and `kenning
restore FILE [--apply]` with KENNING_VALKEY_CLUSTER set (docs/operations.md, "Moving to Valkey
Cluster"), end to end through the CLI.

After the restore every memory is equal, field by field and vector by vector; recall answers as the
one server did; each restored memory's audit event is in the merged audit log; a second ``--apply``
changes nothing. A restore into a cluster with a shard down fails with the typed error naming the
node, and once the node is back the repair sweep and a second ``--apply`` finish it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.cluster import LocalCluster
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder
from kenning.store import connect, layout
from kenning.store.cluster_admin import until
from kenning_cli.main import main
from tests.conftest import _wipe as wipe
from tests.conftest import cluster_module, make_settings, point_cli

pytestmark = pytest.mark.cluster

QUERIES = (
    ("how do we deploy the shop?", "shop"),
    ("where do invoices go?", "billing"),
    ("which node version builds the docs?", "docs"),
    ("what do we use for background jobs?", "shop"),
)


def _populate(engine: Engine) -> str:
    """Three projects, an update (history), a forgotten memory, a suppression, a resolved
    contradiction; the forgotten memory's key."""
    remember = engine.memories.remember
    remember(Draft("We deploy the shop with Fly", project="shop", tags=["deploy"]), actor="a")
    remember(
        Draft("We no longer use Fly; we deploy the shop with Kamal", project="shop"), actor="a"
    )
    jobs = remember(Draft("Background jobs run on Sidekiq", project="shop"), actor="a").key
    engine.memories.update(jobs, "Background jobs run on Sidekiq with Redis 7", actor="a")
    remember(Draft("Invoices are archived for ten years in S3", project="billing"), actor="a")
    remember(Draft("Refunds over 500 EUR need a second approval", project="billing"), actor="a")
    remember(Draft("The docs build with Node 20 and Astro", project="docs"), actor="a")
    remember(Draft("Prefer small pull requests", namespace="preference"), actor="a")
    gone = remember(Draft("Pickle files live under var/cache", project="docs"), actor="a").key
    engine.memories.forget(gone, confirm=True, actor="a")
    (record,), _ = engine.contradictions.listing()
    engine.contradictions.resolve(record.id, "keep_b", "moved in autumn", actor="alice")
    engine.suppressions.suppress("heroku", "we left Heroku in 2024", actor="alice")
    return gone


def _state(engine: Engine, keys: list[str]) -> dict[str, Any]:
    """Every memory's public fields and vector, the contradictions and the suppressions."""
    memories = engine.store.memories
    return {
        "memories": {k: engine.memories.get(k).public() for k in keys},
        "vectors": {k: _raw(memories.read_vector(k)) for k in keys},
        "contradictions": [c.public() for c in engine.contradictions.listing(status="all")[0]],
        "suppressions": [s.suppression.term for s in engine.suppressions.list_suppressions()],
    }


def _raw(vector: Any) -> bytes:
    assert vector is not None
    return bytes(vector.tobytes())


def _answers(engine: Engine) -> list[list[str]]:
    return [
        [h.memory.key for h in engine.recaller.recall(RecallRequest(q, projects=[p])).hits]
        for q, p in QUERIES
    ]


@pytest.fixture
def source(
    valkey_server: EmbeddedValkey, embedder: Embedder, prefix: str, tmp_path: Path
) -> Iterator[Engine]:
    """The one-server store (the suite's server), its backups in this test's folder."""
    settings = make_settings(
        valkey_server.settings.data_dir,
        valkey_server.settings.valkey_port,
        key_prefix=prefix,
        backup_dir=tmp_path / "backups",
    )
    engine = Engine.open(settings, connect(settings), embedder)
    yield engine
    engine.close()
    wipe(engine.store.client, prefix)


def _backup(
    source: Engine, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[Path, list[str]]:
    """`kenning backup --vectors` on the one server: the file and the memory keys it holds."""
    point_cli(monkeypatch, source.ctx.settings, backups=True)
    assert main(["backup", "--vectors"]) == 0
    assert "7 memories, 1 suppressions, 1 contradictions" in capsys.readouterr().out
    (made,) = source.backups.list_backups()
    path = source.backups.path_of(made.file)
    keys = [m["key"] for m in json.loads(path.read_text(encoding="utf-8"))["memories"]]
    return path, keys


def _restore(path: Path, *, apply: bool, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["restore", str(path), *(["--apply"] if apply else [])])
    out, err = capsys.readouterr()
    return code, out + err


def _on_cluster(source: Engine, cluster: LocalCluster, embedder: Embedder) -> Engine:
    """An engine on ``cluster`` with the source's prefix (it creates the index on every shard)."""
    base = source.ctx.settings
    settings = make_settings(
        base.data_dir,
        base.valkey_port,
        key_prefix=base.key_prefix,
        backup_dir=base.resolved_backup_dir,
        valkey_cluster=cluster.spec,
    )
    return Engine.open(settings, connect(settings), embedder)


def _rewrite_aof(capsys: pytest.CaptureFixture[str]) -> None:
    """Every primary rewrites its AOF, whose RDB preamble then holds the index definition:
    valkey-search 1.2.1 restarted from an AOF older than its index comes back without it
    (docs/cluster.md, "Faults"). Through `kenning compact`, as docs/operations.md says: writes
    paused, since a plain BGREWRITEAOF while Kenning writes can deadlock valkey-search 1.2.1."""
    assert main(["compact"]) == 0
    said = capsys.readouterr().out
    assert said.startswith("rewrote the append-only file: "), said


def test_a_backup_restored_into_a_cluster_is_the_same_store(
    source: Engine,
    cluster: LocalCluster,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    gone = _populate(source)
    path, keys = _backup(source, monkeypatch, capsys)
    assert len(keys) == 7
    assert gone not in keys
    before, answered = _state(source, keys), _answers(source)
    assert all(answered), answered  # positive control: every query finds something on one server
    target = _on_cluster(source, cluster, embedder)
    try:
        point_cli(monkeypatch, target.ctx.settings, backups=True)
        code, said = _restore(path, apply=False, capsys=capsys)
        assert code == 0
        assert "memories: add 7, update 0, skip 0" in said
        assert "dry run: nothing was written" in said
        assert target.store.memories.read(keys[0]) is None  # the plan wrote nothing
        code, said = _restore(path, apply=True, capsys=capsys)
        assert (code, "applied" in said) == (0, True)
        assert "vectors: reused" in said
        assert _state(target, keys) == before
        assert target.store.memories.read(gone) is None  # forgotten stays forgotten
        logged = target.history.audit_log(actor="cli:restore", action="restore", limit=100)
        assert sorted(e.key for e in logged.events if e.key) == sorted(keys)
        for key in keys:
            assert [e.action for e in target.history.history(key).events][-1] == "restore"
        everything = target.history.audit_log(actor="cli:restore", limit=100).events
        code, said = _restore(path, apply=True, capsys=capsys)  # again: nothing to do
        assert "memories: add 0, update 0, skip 7" in said
        assert "suppressions: add 0, update 0, skip 1" in said
        after = target.history.audit_log(actor="cli:restore", limit=100).events
        (summary,) = [e for e in after if e not in everything]  # the run's own, nothing written
        assert (summary.key, summary.details["memories"]) == (
            "",
            {"add": 0, "skip": 7, "update": 0},
        )
        assert len(after) == len(everything) + 1
        assert _state(target, keys) == before
        assert _answers(target) == answered  # last: a recall counts its hits
    finally:
        target.close()
        wipe(target.store.client, target.ctx.settings.key_prefix)


def test_a_restore_into_a_cluster_with_a_shard_down_fails_naming_it_and_completes_after(
    source: Engine,
    embedder: Embedder,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _populate(source)
    path, keys = _backup(source, monkeypatch, capsys)
    before = _state(source, keys)
    with LocalCluster(tmp_path, cluster_module(), shards=3, node_timeout_ms=2000) as cluster:
        target = _on_cluster(source, cluster, embedder)
        try:
            point_cli(monkeypatch, target.ctx.settings, backups=True)
            _rewrite_aof(capsys)
            victim = cluster.ports[1]
            cluster.kill(victim)
            code, said = _restore(path, apply=True, capsys=capsys)
            assert code == 1
            assert f"127.0.0.1:{victim}" in said
            assert "applied" not in said
            cluster.restart(victim)
            until(lambda: cluster.admin.healthy(victim), "the node back in the cluster")
            index = target.ctx.index  # and its coordinator answering the others' fan-out again
            until(lambda: bool(layout.info_reply(target.store.client, index)), "the fan-out")
            # the sweep, as `kenning cluster repair` runs it but without its 30 s grace
            repaired = target.store.units.repair(grace=0)  # type: ignore[attr-defined]
            assert (repaired.blocked, repaired.waiting) == ((), 0)
            written = [k for k in keys if target.store.memories.read(k) is not None]
            for key in written:  # nothing half-written: each memory there has its history
                assert [e.action for e in target.history.history(key).events][-1] == "restore"
            code, said = _restore(path, apply=True, capsys=capsys)
            assert (code, "applied" in said) == (0, True), said
            assert f"memories: add {len(keys) - len(written)}, update 0" in said
            assert _state(target, keys) == before
            logged = target.history.audit_log(actor="cli:restore", action="restore", limit=100)
            assert sorted(e.key for e in logged.events if e.key) == sorted(keys)
        finally:
            target.close()
