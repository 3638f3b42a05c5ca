"""Backup -> wipe -> restore round trips; the dry-run plan; newer wins; bad
files refused before writing."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import valkey

from kenning.core.clock import ManualClock
from kenning.core.errors import BackendUnavailable, Conflict, InvalidInput
from kenning.core.models import Memory
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.experience import Approach
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.backup_file import check, decide, rekey
from kenning.ops.embedded import EmbeddedValkey
from kenning.ops.seal import sealed
from kenning.runtime.embedding import Embedder
from kenning.store import AuditEvent, connect
from kenning.store import indexes as index_admin
from kenning_cli.main import load_commands, main
from tests.conftest import free_port, make_settings, point_cli

# a direct store write records itself too
SETUP = [AuditEvent(actor="test", action="test_setup", key="")]

load_commands()


def _wipe(client: valkey.Valkey, prefix: str) -> None:
    """Test-only: drop every key and index of a prefix (the product never scans)."""
    index_admin.drop(client, prefix)
    keys = list(client.scan_iter(match=f"{prefix}*", count=1000))
    if keys:
        client.delete(*keys)


def _populate(engine: Engine) -> dict[str, str]:
    keys = {
        "fly": engine.memories.remember(
            Draft("We deploy with Fly", project="shop", tags=["deploy"]), actor="a"
        ).key,
        "kamal": engine.memories.remember(
            Draft("We no longer use Fly; we deploy with Kamal", project="shop"), actor="a"
        ).key,
        "pref": engine.memories.remember(
            Draft("Prefer small pull requests", namespace="preference"), actor="a"
        ).key,
        "old": engine.memories.remember(
            Draft("Pickle files live under var/cache", project="shop"), actor="a"
        ).key,
    }
    (record,), _ = engine.contradictions.listing()
    engine.contradictions.resolve(record.id, "keep_b", "moved in autumn", actor="alice")
    engine.suppressions.suppress("heroku", "we left Heroku in 2024", actor="alice")
    engine.projects.set("shop", actor="alice", description="The web shop", state="launch prep")
    return keys


def _snapshot(engine: Engine, keys: list[str]) -> dict[str, dict[str, object]]:
    return {key: engine.memories.get(key).public() for key in keys}


@pytest.fixture
def engine(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    tmp_path: Path,
) -> Engine:
    """An engine whose backup directory belongs to this test alone."""
    own = make_settings(
        settings.data_dir,
        settings.valkey_port,
        key_prefix=settings.key_prefix,
        backup_dir=tmp_path / "backups",
    )
    return Engine.open(own, client, embedder, clock=clock)


@pytest.mark.parametrize("vectors", [True, False])
def test_backup_wipe_restore_round_trips_everything(
    engine: Engine, client: valkey.Valkey, embedder: Embedder, clock: ManualClock, vectors: bool
) -> None:
    settings = engine.ctx.settings
    keys = _populate(engine)
    all_keys = [*keys.values(), engine.projects.key("shop")]
    before = _snapshot(engine, all_keys)
    held = {key: engine.store.memories.read_vector(key) for key in keys.values()}
    records_before = [c.public() for c in engine.contradictions.listing(status="all")[0]]
    made = engine.backups.backup(vectors=vectors, label="nightly", actor="admin")
    assert made.file.endswith("-nightly.json")
    assert (made.memories, made.suppressions, made.contradictions, made.project_contexts) == (
        5,
        1,
        1,
        1,
    )
    assert [b.file for b in engine.backups.list_backups()] == [made.file]
    assert Path(made.path).stat().st_mode & 0o077 == 0  # holds every memory: owner only

    _wipe(client, settings.key_prefix)
    fresh = Engine.open(settings, client, embedder, clock=clock)
    assert fresh.store.memories.read(keys["fly"]) is None  # wiped
    path = fresh.backups.path_of(made.file)
    plan = fresh.backups.restore(path, dry_run=True, actor="admin")
    assert plan.memories == {"add": 5, "update": 0, "skip": 0}
    assert plan.suppressions == plan.contradictions == {"add": 1, "update": 0, "skip": 0}
    assert fresh.store.memories.read(keys["fly"]) is None  # the dry run wrote nothing

    done = fresh.backups.restore(path, dry_run=False, actor="admin")
    assert done.vectors == ("reused" if vectors else "re-embedded (the backup has no vectors)")
    assert _snapshot(fresh, all_keys) == before
    for key, vector in held.items():
        restored = fresh.store.memories.read_vector(key)
        assert vector is not None
        assert restored is not None
        if vectors:  # the stored bytes, as they were: never spread a second time
            assert restored.tobytes() == vector.tobytes()
        else:  # embedded again and spread for the same key: the same vector
            assert float(np.dot(restored, vector)) > 0.999
    assert [c.public() for c in fresh.contradictions.listing(status="all")[0]] == records_before
    assert [s.suppression.term for s in fresh.suppressions.list_suppressions()] == ["heroku"]
    hits = fresh.recaller.recall(RecallRequest("how do we deploy?", projects=["shop"])).hits
    assert hits[0].memory.key == keys["kamal"]
    assert [e.action for e in fresh.history.history(keys["old"]).events][-1] == "restore"
    logged = {e.action: e.details for e in fresh.history.audit_log(actor="admin", limit=500).events}
    assert logged["restore_suppression"] == {"term": "heroku", "restore": "add"}
    assert logged["restore_contradiction"]["contradiction"] == records_before[0]["id"]


def test_restore_plan_newer_updated_at_wins(engine: Engine, clock: ManualClock) -> None:
    keys = _populate(engine)
    made = engine.backups.backup(actor="admin")
    clock.advance(60)
    engine.memories.update(keys["old"], "Pickle files live under var/cache/pickles", actor="a")
    path = engine.backups.path_of(made.file)
    plan = engine.backups.restore(path, actor="admin")
    assert plan.memories == {"add": 0, "update": 0, "skip": 5}
    # found as ours
    assert plan.suppressions == plan.contradictions == {"add": 0, "update": 0, "skip": 1}
    (item,) = [i for i in plan.items if i["key"] == keys["old"]]
    assert (item["action"], item["reason"]) == ("skip", "this store's copy is as new or newer")
    assert decide(10.0, 20.0)[0] == "update"
    assert decide(None, 20.0) == ("add", "not in this store")


def test_malformed_and_oversized_files_are_refused_before_writing(engine: Engine) -> None:
    _populate(engine)
    made = engine.backups.backup(vectors=True, actor="admin")
    path = engine.backups.path_of(made.file)
    text = path.read_text(encoding="utf-8")
    data = json.loads(text)
    with pytest.raises(InvalidInput, match="limit is 100"):
        engine.backups.restore(path, actor="admin", max_bytes=100)
    cut = path.with_name("kenning-backup-20260101T000000Z-cut.json")
    cut.write_text(text[: len(text) // 2], encoding="utf-8")
    audit_before = len(engine.history.audit_log(limit=500).events)
    with pytest.raises(InvalidInput, match="not valid JSON"):
        engine.backups.restore(cut, dry_run=False, actor="admin")
    data["memories"][1]["vector"] = "AAAA"
    bad = path.with_name("kenning-backup-20260101T000000Z-bad.json")
    bad.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"memory #1 .* vector of 0 dims"):
        engine.backups.restore(bad, dry_run=False, actor="admin")
    assert len(engine.history.audit_log(limit=500).events) == audit_before  # nothing was written
    for broken in (
        {"format": "other"},
        {**data, "version": 99},
        {**data, "memories": [{"key": "x", "fields": {}}]},
    ):
        with pytest.raises(InvalidInput):
            check(broken)
    with pytest.raises(InvalidInput, match="not a backup file name"):
        engine.backups.path_of("../../etc/passwd")


def test_rekey_moves_only_the_prefix() -> None:
    assert rekey("old:mem:knowledge:01A", "old:", "new:") == "new:mem:knowledge:01A"
    assert rekey("", "old:", "new:") == ""
    assert rekey("other:mem:x", "old:", "new:") == "other:mem:x"


def test_backup_names_are_safe_and_never_overwritten(engine: Engine) -> None:
    with pytest.raises(InvalidInput, match="label"):
        engine.backups.backup(label="../x", actor="admin")
    first = engine.backups.backup(label="same", actor="admin")
    with pytest.raises(Conflict, match="exists already"):
        # same second, same label (the clock is manual)
        engine.backups.backup(label="same", actor="admin")
    assert [b.file for b in engine.backups.list_backups()] == [first.file]


def test_cli_backup_and_restore_with_a_progress_bar(
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    keys = _populate(engine)
    settings = engine.ctx.settings
    monkeypatch.chdir(tmp_path)  # no developer .env leaks in
    point_cli(monkeypatch, settings, backups=True)
    assert main(["backup", "--label", "cli"]) == 0
    out, err = capsys.readouterr()
    assert "5 memories, 1 suppressions, 1 contradictions" in out
    assert "backup  [##############################]       5/5" in err
    (made,) = engine.backups.list_backups()
    engine.memories.forget(keys["pref"], confirm=True, actor="a")
    assert main(["restore", made.file]) == 0
    assert "memories: add 1, update 0, skip 4" in capsys.readouterr().out
    assert engine.store.memories.read(keys["pref"]) is None  # the dry run wrote nothing
    assert main(["restore", str(settings.resolved_backup_dir / made.file), "--apply"]) == 0
    out, err = capsys.readouterr()
    assert "applied" in out
    assert "restore [##############################]       1/1" in err
    assert engine.memories.get(keys["pref"]).content == "Prefer small pull requests"
    # run again with its idempotency key: the file the first run wrote, no second one
    keyed = ["backup", "--label", "keyed", "--idempotency-key", "nightly-2026-12-03"]
    assert main(keyed) == 0
    first = capsys.readouterr().out
    assert main(keyed) == 0
    assert capsys.readouterr().out == first
    assert len(engine.backups.list_backups()) == 2
    assert len(engine.store.audit.recent(action="backup", actor="cli:backup")) == 2


def test_restore_rebuilds_the_graveyard_and_reinstate_hints(
    engine: Engine, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    engine.experience.log_abandoned(
        Approach("celery", "library", "too heavy for two workers"),
        effort=3,
        project="shop",
        actor="agent",
    )
    hinted = engine.memories.remember(
        Draft("Session state lives in Redis with a 30 minute TTL", project="shop"), actor="a"
    ).key
    engine.lifecycle.deprioritise(
        hinted, reason="sessions moved to Postgres", actor="a", reinstate_hints=["redis cluster"]
    )
    question = "should sessions go back to a redis cluster?"

    def flagged(e: Engine) -> list[str]:
        hits = e.recaller.recall(RecallRequest(question, projects=["shop"])).hits
        return [h.memory.key for h in hits if h.reinstate_candidate]

    assert [w.name for w in engine.experience.warn_if_abandoned("try celery for the queue")] == [
        "celery"
    ]
    assert flagged(engine) == [hinted]  # positive controls before the wipe
    made = engine.backups.backup(actor="admin")
    settings = engine.ctx.settings
    _wipe(client, settings.key_prefix)
    fresh = Engine.open(settings, client, embedder, clock=clock)
    assert fresh.experience.warn_if_abandoned("try celery for the queue") == []
    fresh.backups.restore(fresh.backups.path_of(made.file), dry_run=False, actor="admin")
    assert [w.name for w in fresh.experience.warn_if_abandoned("try celery for the queue")] == [
        "celery"
    ]
    assert flagged(fresh) == [hinted]


def _marked_backup(
    engine: Engine, key: str, *, model: str | None = None
) -> tuple[Path, np.ndarray]:
    """A vector backup in which ``key``'s vector is replaced by a marker no model would produce."""
    made = engine.backups.backup(
        vectors=True, label="marked" if model is None else "other-model", actor="admin"
    )
    path = engine.backups.path_of(made.file)
    data = json.loads(path.read_text(encoding="utf-8"))
    marker = np.zeros(engine.ctx.embedder.dimension, dtype=np.float32)
    marker[0] = 1.0
    (entry,) = [e for e in data["memories"] if e["key"] == key]
    entry["vector"] = base64.b64encode(marker.astype("<f4").tobytes()).decode()
    if model is not None:
        data["embedding"]["model"] = model
    # edited on purpose, so sealed again (an edited file is refused: test_an_edited_backup_...)
    path.write_text(json.dumps(sealed(data)), encoding="utf-8")
    return path, marker


@pytest.mark.parametrize("model", [None, "some-other-model"])
def test_vectors_are_reused_only_when_the_model_matches(engine: Engine, model: str | None) -> None:
    key = engine.memories.remember(
        Draft("Invoices are archived for ten years", project="shop"), actor="a"
    ).key
    path, marker = _marked_backup(engine, key, model=model)
    engine.memories.forget(key, confirm=True, actor="a")
    done = engine.backups.restore(path, dry_run=False, actor="admin")
    stored = engine.store.memories.read_vector(key)
    assert stored is not None
    if model is None:
        assert done.vectors == "reused"
        # the file's vector, byte for byte: nothing re-embedded
        assert np.array_equal(stored, marker)
    else:
        assert done.vectors == "re-embedded (the backup used another model)"
        fresh = engine.ctx.embedder.embed("Invoices are archived for ten years")
        assert float(np.dot(stored, fresh)) > 0.999
        assert float(np.dot(stored, marker)) < 0.5


def test_a_refused_file_writes_nothing_even_when_applied(engine: Engine, tmp_path: Path) -> None:
    keys = _populate(engine)
    made = engine.backups.backup(actor="admin")
    path = engine.backups.path_of(made.file)
    data = json.loads(path.read_text(encoding="utf-8"))
    engine.memories.forget(keys["pref"], confirm=True, actor="a")  # the restore would add it back
    assert engine.backups.restore(path, actor="admin").memories["add"] == 1  # positive control
    audit_before = engine.history.audit_log(limit=500).events
    broken = [
        {
            **data,
            "suppressions": [{"term": "heroku", "record": {"term": "heroku", "at": "yesterday"}}],
        },
        {**data, "contradictions": [{**data["contradictions"][0], "status": "maybe"}]},
        {**data, "contradictions": [{**data["contradictions"][0], "a": "elsewhere:key"}]},
        {
            **data,
            "memories": [
                *data["memories"],
                {"key": data["memories"][0]["key"], "fields": {"content": ""}},
            ],
        },
    ]
    for i, bad in enumerate(broken):
        file = path.with_name(f"kenning-backup-20260101T000000Z-bad{i}.json")
        file.write_text(json.dumps(bad), encoding="utf-8")
        with pytest.raises(InvalidInput, match=r"malformed|bad id, status or memory key"):
            engine.backups.restore(file, dry_run=False, actor="admin")
    with pytest.raises(InvalidInput, match="limit is 100"):
        engine.backups.restore(path, dry_run=False, actor="admin", max_bytes=100)
    assert engine.store.memories.read(keys["pref"]) is None
    assert engine.history.audit_log(limit=500).events == audit_before


def test_the_size_limit_is_a_setting(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    tmp_path: Path,
) -> None:
    small = make_settings(
        settings.data_dir,
        settings.valkey_port,
        key_prefix=settings.key_prefix,
        backup_dir=tmp_path / "backups",
        restore_max_mb=1,
    )
    engine = Engine.open(small, client, embedder, clock=clock)
    made = engine.backups.backup(actor="admin")
    path = engine.backups.path_of(made.file)
    # positive control: a small file
    assert engine.backups.restore(path, actor="admin").dry_run is True
    path.write_bytes(path.read_bytes() + b" " * (1024 * 1024))
    with pytest.raises(InvalidInput, match="limit is 1,048,576") as refused:
        engine.backups.restore(path, actor="admin")
    assert "KENNING_RESTORE_MAX_MB" in (refused.value.hint or "")


def test_a_restored_closed_record_does_not_silence_its_pair(
    engine: Engine, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    a = engine.memories.remember(Draft("Do not use pickle", project="shop"), actor="a").key
    b = engine.memories.remember(Draft("Use pickle for caching", project="shop"), actor="a").key
    (record,), _ = engine.contradictions.listing()
    engine.lifecycle.archive(b, reason="obsolete", actor="a")
    assert engine.contradictions.get(record.id).status == "closed"
    made = engine.backups.backup(actor="admin")
    settings = engine.ctx.settings
    _wipe(client, settings.key_prefix)
    fresh = Engine.open(settings, client, embedder, clock=clock)
    done = fresh.backups.restore(fresh.backups.path_of(made.file), dry_run=False, actor="admin")
    assert done.contradictions["add"] == 1
    assert fresh.contradictions.get(record.id).status == "closed"  # the history came back
    # re-checks: the pair can be flagged anew
    fresh.lifecycle.reinstate(b, reason="back again", actor="a")
    (again,), _ = fresh.contradictions.listing()
    assert (again.a, again.b, again.status) == (a, b, "open")
    assert again.id != record.id


def test_valkey_going_away_mid_backup_leaves_no_file(tmp_path: Path, embedder: Embedder) -> None:
    settings = make_settings(tmp_path / "doomed", free_port(), backup_dir=tmp_path / "backups")
    with EmbeddedValkey(settings) as server:
        engine = Engine.open(
            settings, connect(settings), embedder, clock=ManualClock(1_790_000_000.0)
        )
        vector = embedder.embed("a memory")
        # two vector batches: the second one is read after the first progress call
        for i in range(501):
            key = engine.store.memories.new_key("knowledge", f"01H{i:023d}")
            engine.store.memories.write(
                Memory(
                    key=key,
                    content=f"memory {i}",
                    namespace="knowledge",
                    created_at=1_790_000_000.0 + i,
                    updated_at=1_790_000_000.0,
                ),
                vector,
                SETUP,
            )
        calls: list[int] = []

        def stop_after_first_batch(label: str, done: int, total: int) -> None:
            calls.append(done)
            server.stop()

        with pytest.raises(BackendUnavailable):
            engine.backups.backup(vectors=True, actor="admin", progress=stop_after_first_batch)
    assert calls == [500]  # positive control: the first batch was written to the partial file
    assert list((tmp_path / "backups").iterdir()) == []


def test_backups_carry_live_recall_counts(
    engine: Engine, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    key = engine.memories.remember(Draft("We deploy with Kamal", project="shop"), actor="a").key
    for _ in range(2):  # counted beside the hash, not folded into it yet
        engine.recaller.recall(RecallRequest("how do we deploy?", projects=["shop"]))
    made = engine.backups.backup(actor="admin")
    settings = engine.ctx.settings
    _wipe(client, settings.key_prefix)
    fresh = Engine.open(settings, client, embedder, clock=clock)
    fresh.backups.restore(fresh.backups.path_of(made.file), dry_run=False, actor="admin")
    restored = fresh.memories.get(key)
    assert (restored.recall_count, restored.last_recalled) == (2, clock.now())
    stored: Any = client.hget(key, "recall_count")
    assert stored == b"2"  # in the hash itself: sorting sees it at once


def test_an_uploaded_backup_is_kept_only_when_it_reads_as_one(engine: Engine) -> None:
    remember_one = engine.memories.remember(
        Draft("Backups are uploaded through the dashboard"), actor="agent"
    )
    made = engine.backups.backup(actor="admin")
    data = engine.backups.path_of(made.file).read_bytes()
    copy = made.file.replace(".json", "-copy.json")
    for name, body, error in (
        (copy, b"{damaged", InvalidInput),
        ("../evil.json", data, InvalidInput),
        (made.file, data, Conflict),
    ):
        with pytest.raises(error):
            engine.backups.receive(name, body, actor="admin")
    assert [b.file for b in engine.backups.list_backups()] == [made.file]  # nothing half-kept
    assert engine.backups.receive(copy, data, actor="admin").public() == {
        "file": copy,
        "bytes": len(data),
    }
    report = engine.backups.restore_file(copy, dry_run=True, actor="admin")
    assert report.memories["skip"] == 1
    assert remember_one.key in engine.backups.path_of(copy).read_text(encoding="utf-8")
    assert engine.history.audit_log(action="upload_backup").events[0].details["file"] == copy


def _kept_apart_pair(engine: Engine) -> tuple[str, str]:
    """Two near-duplicates a person kept apart; the pair is proposed before the
    decision (positive control)."""
    text = "The staging database is refreshed from production every Sunday night"
    first = engine.memories.remember(Draft(text, project="shop"), actor="a").key
    second = engine.memories.remember(
        Draft(text + ".", project="shop"), actor="a", allow_duplicate=True
    ).key
    assert engine.duplicates.find("knowledge", project="shop").cluster_count == 1
    engine.duplicates.keep_both(
        [first, second], "one is staging, one is the old staging", actor="curator"
    )
    assert engine.duplicates.find("knowledge", project="shop").cluster_count == 0
    return first, second


def test_keep_both_decisions_round_trip_through_a_backup(
    engine: Engine, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    first, second = _kept_apart_pair(engine)
    made = engine.backups.backup(actor="admin")
    assert made.kept_apart == 1
    stored = json.loads(Path(made.path).read_text())["kept_apart"]
    assert [e["pair"] for e in stored] == [sorted((first, second))]
    assert stored[0]["record"]["reason"] == "one is staging, one is the old staging"

    _wipe(client, engine.ctx.settings.key_prefix)
    fresh = Engine.open(engine.ctx.settings, client, embedder, clock=clock)
    path = fresh.backups.path_of(made.file)
    assert fresh.backups.restore(path, dry_run=True, actor="admin").kept_apart == {
        "add": 1,
        "update": 0,
        "skip": 0,
    }
    done = fresh.backups.restore(path, dry_run=False, actor="admin")
    assert done.kept_apart == {"add": 1, "update": 0, "skip": 0}
    # the pair is back to propose
    assert {fresh.memories.get(k).state for k in (first, second)} == {"active"}
    # the decision holds again
    assert fresh.duplicates.find("knowledge", project="shop").cluster_count == 0
    assert (
        fresh.store.distinct.decisions()[f"{min(first, second)}|{max(first, second)}"]["actor"]
        == "curator"
    )
    logged = [
        e
        for e in fresh.history.history(min(first, second)).events
        if e.action == "restore_kept_apart"
    ]
    assert [e.details["restore"] for e in logged] == ["add"]
    # restored already: nothing to do
    again = fresh.backups.restore(path, dry_run=True, actor="admin")
    assert again.kept_apart == {"add": 0, "update": 0, "skip": 1}


def test_a_backup_without_kept_apart_still_restores_and_a_bad_entry_is_refused(
    engine: Engine,
) -> None:
    first, second = _kept_apart_pair(engine)
    made = engine.backups.backup(actor="admin")
    path = Path(made.path)
    data = json.loads(path.read_text())
    del data["kept_apart"]  # a backup written before decisions were carried (and sealed)
    del data["checksum"]
    data["version"] = 1
    older = path.with_name(path.name.replace(".json", "-older.json"))
    older.write_text(json.dumps(data))
    assert engine.backups.restore(older, dry_run=True, actor="admin").kept_apart == {
        "add": 0,
        "update": 0,
        "skip": 0,
    }
    for bad in (
        [{"pair": [first], "record": {"at": 1.0}}],
        [{"pair": [first, "elsewhere:mem:x:1"], "record": {}}],
        [{"pair": [first, first], "record": {"at": 1.0}}],
        {"pair": [first, second]},
    ):
        data["kept_apart"] = bad
        older.write_text(json.dumps(data))
        with pytest.raises(InvalidInput, match="kept_apart"):
            engine.backups.restore(older, dry_run=True, actor="admin")
