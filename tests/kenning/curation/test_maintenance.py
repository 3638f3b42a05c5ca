"""The maintenance job: expiry, duplicate review (auto-merge only when configured), contradiction
re-checks, index drift and phantom entries, and reindex."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import valkey

from kenning.core.clock import ManualClock
from kenning.core.errors import Conflict
from kenning.core.settings import Settings
from kenning.curation.maintenance import Maintenance
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.runtime.embedding import Embedder
from kenning.store import AuditEvent
from kenning_cli.main import load_commands, main
from tests.conftest import make_settings, point_cli
from tests.margins import assert_pair

# a direct store write records itself too
SETUP = [AuditEvent(actor="test", action="test_setup", key="")]

load_commands()

DAY = 86_400.0
LINT = [
    "Run the linter with `make lint` before pushing",
    "Always run the linter with `make lint` before pushing",
]


def test_expired_knowledge_is_archived_with_the_reason(engine: Engine, clock: ManualClock) -> None:
    due = engine.memories.remember(
        Draft(
            "The conference discount code is KENNING26", project="p", expires_at=clock.now() + DAY
        ),
        actor="feed",
    ).key
    lasting = engine.memories.remember(
        Draft("The office is in Lisbon", project="p", expires_at=clock.now() + 30 * DAY),
        actor="feed",
    ).key
    # positive control: not yet due
    assert engine.maintenance.expire(actor="maintenance").count == 0
    clock.advance(2 * DAY)
    report = engine.maintenance.run()
    assert report.expired.archived == [due]
    archived = engine.memories.get(due)
    assert (archived.state, archived.state_reason, archived.state_actor) == (
        "archived",
        "expired on 2026-09-22T14:13:20Z",
        "maintenance",
    )
    assert engine.memories.get(lasting).state == "active"


def test_expiry_reports_a_memory_another_writer_removed_meanwhile(
    engine: Engine, clock: ManualClock
) -> None:
    due = [
        engine.memories.remember(
            Draft(t, project="p", expires_at=clock.now() + DAY), actor="feed"
        ).key
        for t in ("The spring sale code is SPRING26", "The booth is in hall 4")
    ]
    clock.advance(2 * DAY)

    def racing_archive(key: str, *, reason: str | None, actor: str) -> object:
        if key == due[0]:  # another writer forgets it between the sweep and the archive
            engine.memories.forget(key, confirm=True, actor="alice")
        return engine.lifecycle.archive(key, reason=reason, actor=actor)

    report = Maintenance(
        engine.ctx, engine.contradictions, engine.duplicates, racing_archive
    ).expire(actor="m")
    # positive control: the other one expired
    assert (report.archived, report.count) == ([due[1]], 1)
    assert [s["key"] for s in report.skipped] == [due[0]]
    assert "no memory" in report.skipped[0]["why"]


def test_duplicates_are_reported_not_merged_by_default(engine: Engine) -> None:
    keys = [
        engine.memories.remember(Draft(t, project="p"), actor="a", allow_duplicate=True).key
        for t in LINT
    ]
    report = engine.maintenance.run().duplicates
    assert report.auto_merge_threshold is None
    assert report.merged == []
    assert [sorted(r["keys"]) for r in report.review] == [sorted(keys)]
    assert {engine.memories.get(k).state for k in keys} == {"active"}


@pytest.mark.both_backends
def test_auto_merge_only_above_the_configured_threshold(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    strict = make_settings(
        settings.data_dir,
        settings.valkey_port,
        key_prefix=settings.key_prefix,
        auto_merge_threshold=0.92,
        duplicate_threshold=0.75,
    )
    tuesdays = ("Deploys go out on Tuesdays", "We deploy on Tuesdays")
    assert_pair(embedder, *LINT, above=0.92)  # about 0.975
    assert_pair(embedder, *tuesdays, above=0.75, below=0.92)  # about 0.85
    engine = Engine.open(strict, client, embedder, clock=clock)
    close = [
        engine.memories.remember(Draft(t, project="p"), actor="a", allow_duplicate=True).key
        for t in LINT
    ]
    loose = [
        engine.memories.remember(Draft(t, project="q"), actor="a", allow_duplicate=True).key
        for t in tuesdays
    ]
    report = engine.maintenance.run().duplicates
    (merged,) = report.merged
    assert sorted([merged.kept, *merged.archived]) == sorted(close)
    assert merged.reason.startswith("duplicate of ")
    assert [sorted(r["keys"]) for r in report.review] == [sorted(loose)]  # 0.85 < 0.92: review only


def test_open_contradictions_are_rechecked(engine: Engine) -> None:
    a = engine.memories.remember(Draft("Do not use pickle", project="p"), actor="a").key
    b = engine.memories.remember(Draft("Use pickle for caching", project="p"), actor="a").key
    first = engine.maintenance.run().contradictions
    assert (first.examined, first.closed) == (1, [])  # positive control: still conflicting
    # An edit that bypasses Memories.update (e.g. a restore of an older
    # copy) leaves the record stale.
    engine.store.memories.update(b, {"content": "Use msgpack for caching"}, SETUP)
    second = engine.maintenance.run().contradictions
    assert [c["reason"] for c in second.closed] == ["the two memories no longer conflict (edited)"]
    assert engine.memories.get(a).trust == engine.memories.get(b).trust == "stated"


def test_index_report_counts_phantoms_and_reindex_keeps_documents(
    engine: Engine, client: valkey.Valkey
) -> None:
    keys = [
        engine.memories.remember(Draft(t, project="p"), actor="a").key
        for t in ("Redis streams back the audit log", "The dashboard is server-rendered")
    ]
    clean = engine.maintenance.index_report()
    assert (clean.drift, clean.phantoms) == ([], 0)
    assert clean.namespaces["knowledge"]["searchable"] == 2
    client.hdel(keys[0], "created_at")  # a row the index still lists without the hash it came from
    broken = engine.maintenance.index_report()
    assert broken.phantoms == 1
    assert broken.drift[0]["index"] == engine.ctx.index
    assert (
        broken.namespaces["knowledge"]["phantoms"],
        broken.namespaces["episodic"]["phantoms"],
    ) == (1, 0)
    client.hset(keys[0], "created_at", repr(1.0))
    result = engine.maintenance.reindex(actor="admin")
    assert (result.num_docs, result.index) == (2, engine.ctx.index)
    hits = engine.recaller.recall(RecallRequest("what renders the dashboard?", projects=["p"])).hits
    assert hits[0].memory.key == keys[1]
    assert engine.maintenance.index_report().drift == []


def test_the_last_report_is_kept(engine: Engine) -> None:
    assert engine.maintenance.last_findings() is None
    report = engine.maintenance.run()
    kept = engine.maintenance.last_findings()
    assert kept is not None
    assert kept.at == report.started_at
    assert kept.expired == report.expired.count
    assert kept.contradictions_closed == len(report.contradictions.closed)
    assert kept.index_drift == list(report.indexes.drift)


def test_cli_maintain_and_reindex(
    engine: Engine,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    engine.memories.remember(
        Draft("The staging host is staging.internal", project="p", expires_at="2020-01-01"),
        actor="feed",
    )
    settings = engine.ctx.settings
    monkeypatch.chdir(tmp_path)  # no developer .env leaks in
    point_cli(monkeypatch, settings)
    assert main(["maintain", "--summary"]) == 0
    assert capsys.readouterr().out.startswith("expired: 1; duplicate clusters: 0")
    assert main(["maintain"]) == 0
    # already archived by the first run
    assert json.loads(capsys.readouterr().out)["expired"]["count"] == 0
    assert main(["reindex"]) == 0
    assert "(1 documents, 1 before)" in capsys.readouterr().out


def test_a_second_reindex_of_the_same_index_is_refused_while_one_runs(
    engine: Engine, client: valkey.Valkey
) -> None:
    lock = f"{engine.ctx.settings.key_prefix}lock:reindex:memories"
    assert engine.maintenance.reindex(actor="admin").index == engine.ctx.index  # positive control
    assert client.get(lock) is None  # released when done
    client.set(lock, "another-process", px=60_000)
    with pytest.raises(Conflict, match="being rebuilt already"):
        engine.maintenance.reindex(actor="admin")
    client.delete(lock)
    # free again once released
    assert engine.maintenance.reindex(actor="admin").index == engine.ctx.index


@pytest.mark.both_backends
def test_auto_merge_never_archives_one_side_of_a_contradiction(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    eager = make_settings(
        settings.data_dir,
        settings.valkey_port,
        key_prefix=settings.key_prefix,
        auto_merge_threshold=0.88,
        duplicate_threshold=0.85,
    )
    use, no = "Use pickle for caching", "Do not use pickle for caching"
    assert_pair(embedder, use, use + " please", above=0.88)  # about 0.95-0.97: merged
    assert_pair(embedder, use, no, above=0.88)  # as close: only the opposite polarity keeps it
    engine = Engine.open(eager, client, embedder, clock=clock)
    same = [
        engine.memories.remember(Draft(t, project="p"), actor="a", allow_duplicate=True).key
        for t in ("Use pickle for caching", "Use pickle for caching please")
    ]
    opposite = engine.memories.remember(
        Draft("Do not use pickle for caching", project="p"), actor="a"
    ).key
    (merged,) = engine.maintenance.run().duplicates.merged
    assert sorted([merged.kept, *merged.archived]) == sorted(same)  # positive control: a real merge
    assert engine.memories.get(opposite).state == "active"
