"""History, the audit log, and restoring a forgotten memory within the retention window."""

from __future__ import annotations

from typing import Any

import pytest

from kenning.core.clock import ManualClock
from kenning.core.errors import Conflict, NotFound
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.store.audit import AuditEvent

DAY = 86_400.0


def test_history_lists_who_did_what_and_why(engine: Engine) -> None:
    key = engine.memories.remember(
        Draft("CI runs on GitHub Actions", project="p"), actor="agent"
    ).key
    engine.memories.retag(key, add=["ci"], actor="alice", reason="group CI notes")
    engine.belief.verify(key, "seen in the repo", actor="bob")
    history = engine.history.history(key)
    assert history.exists is True
    assert [(e.action, e.actor, e.reason) for e in history.events] == [
        ("remember", "agent", ""),
        ("retag", "alice", "group CI notes"),
        ("verify", "bob", "seen in the repo"),
    ]
    assert history.events[0].after  # the content digest


def test_history_of_a_forgotten_key_remains_and_an_unknown_key_is_not_found(engine: Engine) -> None:
    key = engine.memories.remember(
        Draft("The build cache lives in S3", project="p"), actor="agent"
    ).key
    engine.memories.forget(key, confirm=True, actor="alice", reason="moved")
    gone = engine.history.history(key)  # positive control: no record, but its history answers
    assert (gone.exists, gone.current) == (False, None)
    assert [e.action for e in gone.events] == ["remember", "forget"]
    with pytest.raises(NotFound, match="no history"):
        engine.history.history(
            engine.store.memories.new_key("knowledge", "01HNEVER0000000000000000000")
        )


def test_audit_log_filters_and_pages(engine: Engine, clock: ManualClock) -> None:
    for i in range(3):
        engine.memories.remember(
            Draft(f"Fact number {i} about the build cache", project="p"),
            actor="agent",
            allow_duplicate=True,
        )
        clock.advance(60)
    key = engine.memories.remember(Draft("The build uses ccache", project="p"), actor="alice").key
    by_alice = engine.history.audit_log(actor="alice")
    assert [(e.actor, e.key) for e in by_alice.events] == [("alice", key)]
    first = engine.history.audit_log(action="remember", limit=2)
    assert len(first.events) == 2
    assert first.next is not None
    rest = engine.history.audit_log(action="remember", limit=2, before=first.next)
    keys = [e.key for e in first.events + rest.events]
    assert len(keys) == len(set(keys)) == 4
    recent = engine.history.audit_log(since=clock.now() - 90)
    assert [e.key for e in recent.events] == [key, keys[1]]


def test_forget_then_restore_brings_back_the_fields(engine: Engine, clock: ManualClock) -> None:
    draft = Draft(
        "Staging deploys need the VPN profile `ops-staging`",
        namespace="episodic",
        project="shop",
        tags=["deploy", "vpn"],
        title="VPN for staging",
        event_date="2026-09-01",
    )
    key = engine.memories.remember(draft, actor="agent").key
    before = engine.memories.get(key)
    engine.memories.forget(key, confirm=True, actor="alice", reason="cleaning up")
    with pytest.raises(NotFound):
        engine.memories.get(key)
    clock.advance(5 * DAY)
    restored = engine.history.restore_forgotten(key, actor="alice", reason="it was still true")
    again = engine.memories.get(key)
    for name in (
        "content",
        "namespace",
        "project",
        "tags",
        "title",
        "event_date",
        "created_at",
        "kind",
        "valid_from",
        "actor",
        "trust",
        "state",
    ):
        assert getattr(again, name) == getattr(before, name), name
    assert restored.key == key
    hits = engine.recaller.recall(
        RecallRequest("which VPN profile for staging?", projects=["shop"])
    ).hits
    assert hits[0].memory.key == key  # re-embedded: recall finds it
    assert [e.action for e in engine.history.history(key).events][-2:] == [
        "forget",
        "restore_forgotten",
    ]
    with pytest.raises(Conflict, match="exists"):
        engine.history.restore_forgotten(key, actor="alice")


def test_restore_is_refused_after_the_retention_window(engine: Engine, clock: ManualClock) -> None:
    kept = engine.memories.remember(Draft("Old but restorable", project="p"), actor="a").key
    late = engine.memories.remember(
        Draft("Gone for too long to restore", project="p"), actor="a"
    ).key
    engine.memories.forget(late, confirm=True, actor="a")
    clock.advance((engine.ctx.settings.forget_retention_days + 1) * DAY)
    engine.memories.forget(kept, confirm=True, actor="a")
    assert engine.history.restore_forgotten(kept, actor="a").key == kept  # positive control
    with pytest.raises(Conflict, match="more than 30 days"):
        engine.history.restore_forgotten(late, actor="a")
    with pytest.raises(NotFound):
        engine.history.restore_forgotten(
            engine.store.memories.new_key("knowledge", "01HNEVER0000000000000000000"), actor="a"
        )


def test_restore_forgotten_rebuilds_its_reinstate_hints(engine: Engine) -> None:
    key = engine.memories.remember(
        Draft("Session state lives in Redis with a 30 minute TTL", project="p"), actor="a"
    ).key
    engine.lifecycle.deprioritise(
        key, reason="moved to Postgres", actor="a", reinstate_hints=["redis cluster"]
    )
    question = RecallRequest("should sessions go back to a redis cluster?", projects=["p"])

    def flagged() -> list[str]:
        return [
            h.memory.key for h in engine.recaller.recall(question).hits if h.reinstate_candidate
        ]

    assert flagged() == [key]  # positive control
    engine.lifecycle.forget(key, confirm=True, actor="a", reason="cleanup")
    assert flagged() == []
    engine.history.restore_forgotten(key, actor="a")
    assert engine.memories.get(key).state == "deprioritised"
    assert flagged() == [key]


def test_a_restored_disputed_memory_is_disputed_only_if_the_conflict_still_stands(
    engine: Engine,
) -> None:
    a = engine.memories.remember(Draft("Do not use pickle", project="p"), actor="a").key
    b = engine.memories.remember(Draft("Use pickle for caching", project="p"), actor="a").key
    assert engine.memories.get(a).trust == "disputed"  # positive control
    engine.memories.forget(a, confirm=True, actor="a")
    assert engine.memories.get(b).trust == "stated"
    assert engine.history.restore_forgotten(a, actor="a").trust == "stated"
    # flagged anew
    assert engine.memories.get(a).trust == engine.memories.get(b).trust == "disputed"
    (record,), total = engine.contradictions.listing()
    assert (total, record.a, record.b) == (1, a, b)
    engine.memories.forget(a, confirm=True, actor="a")
    engine.memories.forget(b, confirm=True, actor="a")
    engine.history.restore_forgotten(a, actor="a")
    assert engine.memories.get(a).trust == "stated"  # nothing left to disagree with: not disputed
    assert engine.contradictions.listing() == ([], 0)


def test_history_shows_the_newest_events_and_restore_finds_the_last_forget(engine: Engine) -> None:
    key = engine.memories.remember(
        Draft("Builds are cached in ~/.cache/build", project="p"), actor="a"
    ).key
    for i in range(6):
        engine.memories.retag(key, add=[f"t{i}"], actor="a")
    engine.memories.forget(key, confirm=True, actor="a", reason="first")
    engine.history.restore_forgotten(key, actor="a")
    engine.memories.retag(key, add=["last"], actor="a")
    engine.memories.forget(key, confirm=True, actor="a", reason="second")
    newest = engine.history.history(key, limit=3).events
    assert [(e.action, e.reason) for e in newest] == [
        ("restore_forgotten", ""),
        ("retag", ""),
        ("forget", "second"),
    ]
    # from the second snapshot
    assert "last" in engine.history.restore_forgotten(key, actor="a").tags


def test_restore_is_refused_once_the_snapshot_expired(engine: Engine) -> None:
    key = engine.memories.remember(
        Draft("Short-lived note about a temp bucket", project="p"), actor="a"
    ).key
    engine.memories.forget(key, confirm=True, actor="a")
    assert engine.store.snapshots.read(key) is not None  # positive control: restorable now
    engine.store.snapshots.drop(key)  # what the Valkey TTL does when the retention window ends
    with pytest.raises(Conflict, match=r"snapshot of .* is gone"):
        engine.history.restore_forgotten(key, actor="a")
    with pytest.raises(NotFound):
        engine.memories.get(key)


def test_a_memory_history_holds_event_ids_and_the_events_live_once_in_the_audit_stream(
    engine: Engine,
) -> None:
    key = engine.memories.remember(
        Draft("Deploys go through Kamal", project="p"), actor="agent"
    ).key
    engine.memories.retag(key, add=["deploy"], actor="alice", reason="group deploy notes")
    audit = engine.store.audit
    client: Any = engine.store.client
    assert client.type(audit.events_key(key)) == b"list"
    assert client.exists(audit.history_key(key)) == 0  # no per-memory copy of the stream any more
    ids = [i.decode() for i in client.lrange(audit.events_key(key), 0, -1)]
    assert len(ids) == 2
    assert [len(client.xrange(audit.stream, min=i, max=i)) for i in ids] == [1, 1]
    assert [e.id for e in audit.history(key)] == ids


def test_history_written_before_the_id_lists_is_still_read_and_merged_in_order(
    engine: Engine,
) -> None:
    key = engine.memories.remember(
        Draft("Postgres runs version 16 everywhere", project="p"), actor="agent"
    ).key
    audit = engine.store.audit
    client: Any = engine.store.client
    # what the old code left behind: the memory's own stream, holding a copy of an earlier event
    old = AuditEvent(actor="legacy", action="import", key=key, reason="old store", at=1.0)
    old_id = client.xadd(audit.history_key(key), old.fields(), id="1-1")
    engine.memories.retag(key, add=["db"], actor="alice", reason="group db notes")
    events = audit.history(key)
    assert [(e.action, e.actor) for e in events] == [
        ("import", "legacy"),
        ("remember", "agent"),
        ("retag", "alice"),
    ]
    assert events[0].id == old_id.decode()
    assert [e.action for e in audit.latest(key, limit=2)] == ["remember", "retag"]
    assert [e.action for e in audit.history(key, limit=2)] == ["import", "remember"]
