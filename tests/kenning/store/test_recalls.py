"""Recall counters beside the memory hashes: a recall never writes a memory hash, reads show live
values, maintenance folds them for sorting, a concurrent touch is never
lost, forget and old hashes."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import valkey

from kenning.core.clock import ManualClock
from kenning.engine import Engine
from kenning.memory.inspection import AuditRequest
from kenning.memory.lifecycle import ProjectDone
from kenning.memory.listing import Listing
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.store.recalls import SETTLED_TTL
from kenning.store.writer import Commands

BACKUP = "The nightly backup job copies the Valkey AOF to object storage at 02:00 UTC."
DEPLOY = "Production deploys go out with Kamal from the main branch every Tuesday."
LINT = "The linter runs with `make lint` and must be clean before a merge."


def _remember(engine: Engine, *texts: str) -> list[str]:
    return [engine.memories.remember(Draft(t, project="p"), actor="a").key for t in texts]


def _recall(engine: Engine, text: str) -> list[str]:
    return [
        h.memory.key
        for h in engine.recaller.recall(RecallRequest(text, projects=["p"], top_k=1)).hits
    ]


def _stored_count(client: valkey.Valkey, key: str) -> bytes | None:
    """The recall_count field of the memory hash itself (not the live value)."""
    raw: Any = client.hget(key, "recall_count")
    return None if raw is None else bytes(raw)


def _ttl(client: valkey.Valkey, key: str) -> int:
    raw: Any = client.ttl(key)
    return int(raw)


@contextmanager
def _hash_events(client: valkey.Valkey, *keys: str) -> Iterator[Callable[[], list[str]]]:
    """The hash commands run on ``keys`` while the block runs, through keyspace notifications:
    the same on both engines (FT.INFO's max_doc_id, which a re-index bumps,
    exists only on RediSearch)."""
    settings: Any = client.config_get("notify-keyspace-events")
    before = settings["notify-keyspace-events"]
    client.config_set("notify-keyspace-events", "Kh")
    listener = client.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
    listener.subscribe(*(f"__keyspace@0__:{key}" for key in keys))
    listener.get_message(timeout=1.0)  # the subscription is confirmed before anything is counted

    def seen() -> list[str]:
        events = []
        while (message := listener.get_message(timeout=0.5)) is not None:
            events.append(message["data"].decode())
        return events

    try:
        yield seen
    finally:
        listener.close()
        client.config_set("notify-keyspace-events", before)


# keyspace notifications of one node
@pytest.mark.single_server
def test_a_recall_counts_only_what_it_returned_and_never_writes_the_hash(
    engine: Engine, client: valkey.Valkey, clock: ManualClock
) -> None:
    backup, deploy = _remember(engine, BACKUP, DEPLOY)
    stored = client.hgetall(backup), client.hgetall(deploy)
    clock.advance(60)
    with _hash_events(client, backup, deploy) as seen:
        assert _recall(engine, "when does the backup run?") == [backup]
        assert _recall(engine, "what time is the backup job?") == [backup]
        assert seen() == []  # no command touched either hash, so nothing was re-indexed
        # byte-identical: no field written
        assert (client.hgetall(backup), client.hgetall(deploy)) == stored
        counted, other = engine.memories.get(backup), engine.memories.get(deploy)
        assert (counted.recall_count, counted.last_recalled) == (2, clock.now())
        assert (other.recall_count, other.last_recalled) == (0, None)  # not returned: unchanged
        # positive control: a hash write is seen
        engine.memories.retag(backup, add=["ops"], actor="a")
        assert "hset" in seen()


def test_recall_results_carry_the_new_count(engine: Engine) -> None:
    (backup,) = _remember(engine, BACKUP)
    for expected in (1, 2, 3):
        (hit,) = engine.recaller.recall(
            RecallRequest("when does the backup run?", projects=["p"], top_k=1)
        ).hits
        assert (hit.memory.key, hit.memory.recall_count) == (backup, expected)


def test_get_inspect_list_and_audit_show_live_values(engine: Engine, clock: ManualClock) -> None:
    backup, deploy = _remember(engine, BACKUP, DEPLOY)
    _recall(engine, "when does the backup run?")
    assert engine.inspection.explain(backup).public()["memory"]["recall_count"] == 1
    assert [m.recall_count for m in engine.inspection.records([backup, deploy])] == [1, 0]
    listed = {
        m.key: (m.recall_count, m.last_recalled) for m in engine.memories.list(Listing()).items
    }
    assert listed == {backup: (1, clock.now()), deploy: (0, None)}
    page = engine.inspection.audit(AuditRequest(), for_person=True).page.items
    assert {i["key"]: i["recall_count"] for i in page} == {backup: 1, deploy: 0}


def test_maintenance_folds_the_counters_so_sorting_sees_them(
    engine: Engine, client: valkey.Valkey
) -> None:
    backup, deploy, lint = _remember(engine, BACKUP, DEPLOY, LINT)
    for _ in range(3):
        _recall(engine, "how do I run the linter?")
    _recall(engine, "how do production deploys go out?")
    by_count = Listing(sort="recall_count", descending=True)
    before = engine.memories.list(by_count).items
    # shown live...
    assert {m.key: m.recall_count for m in before} == {lint: 3, deploy: 1, backup: 0}
    # ...while the hash holds the last folded value (a count of 0 is left out of it: schema)
    assert _stored_count(client, lint) is None
    report = engine.maintenance.run()
    assert report.recall_counters == {"folded": 2, "orphans_removed": 0}
    assert _stored_count(client, lint) == b"3"
    assert [m.key for m in engine.memories.list(by_count).items] == [lint, deploy, backup]
    assert [
        m.key for m in engine.memories.list(Listing(sort="recall_count", descending=False)).items
    ] == [backup, deploy, lint]
    assert engine.maintenance.run().recall_counters["folded"] == 0  # nothing touched since
    # folded and quiet: may go
    assert 0 < _ttl(client, engine.store.memories.recalls.key(lint)) <= SETTLED_TTL
    _recall(engine, "how do I run the linter?")
    # the raw read below does not wait for the touch written behind
    engine.store.recall_writes.flush()
    # touched again: kept until folded
    assert _ttl(client, engine.store.memories.recalls.key(lint)) == -1
    assert engine.memories.get(lint).recall_count == 4


def test_a_touch_during_a_fold_is_never_lost(engine: Engine) -> None:
    (backup,) = _remember(engine, BACKUP)
    recalls = engine.store.memories.recalls
    memory = engine.memories.get(backup)
    touches, folds = 300, 0
    done = threading.Event()

    def touch() -> None:
        for _ in range(touches):
            # as the recall writer sends it
            Commands(engine.store.client, lambda: recalls.touches([memory], 1.0))()
        done.set()

    worker = threading.Thread(target=touch)
    worker.start()
    while not done.is_set():
        folds += recalls.fold(batch=1)["folded"]
    worker.join()
    recalls.fold()
    assert folds > 0  # the folds really ran while touches were landing
    assert engine.memories.get(backup).recall_count == touches
    assert _stored_count(engine.store.client, backup) == str(touches).encode()


def test_forget_removes_the_counter_and_the_fold_clears_a_late_touch(
    engine: Engine, client: valkey.Valkey
) -> None:
    backup, deploy = _remember(engine, BACKUP, DEPLOY)
    recalls = engine.store.memories.recalls
    _recall(engine, "when does the backup run?")
    _recall(engine, "how do production deploys go out?")
    memory = engine.memories.get(backup)
    assert client.exists(recalls.key(backup), recalls.key(deploy)) == 2
    engine.memories.forget(backup, confirm=True, actor="a", reason="obsolete")
    assert client.exists(recalls.key(backup)) == 0
    assert client.exists(recalls.key(deploy)) == 1  # positive control: the other counter stays
    # a recall that read it before the forget touches it after
    Commands(client, lambda: recalls.touches([memory], 5.0))()
    assert engine.maintenance.run().recall_counters == {"folded": 1, "orphans_removed": 1}
    # the orphan is gone and nothing was re-created
    assert client.exists(recalls.key(backup), backup) == 0


def test_counts_stored_in_the_hash_by_the_old_touch_keep_counting(
    engine: Engine, client: valkey.Valkey, clock: ManualClock
) -> None:
    backup, deploy = _remember(engine, BACKUP, DEPLOY)
    client.hset(backup, mapping={"recall_count": "5", "last_recalled": repr(clock.now() - 100)})
    client.hset(deploy, mapping={"recall_count": "2", "last_recalled": repr(clock.now() - 50)})
    assert (engine.memories.get(backup).recall_count, engine.memories.get(deploy).recall_count) == (
        5,
        2,
    )
    _recall(engine, "when does the backup run?")
    assert engine.memories.get(backup).recall_count == 6
    assert (
        engine.memories.get(deploy).recall_count,
        engine.memories.get(deploy).last_recalled,
    ) == (2, clock.now() - 50)
    engine.maintenance.run()
    assert _stored_count(client, backup) == b"6"
    assert _stored_count(client, deploy) == b"2"


def test_a_settled_counter_that_expired_leaves_the_folded_value(
    engine: Engine, client: valkey.Valkey
) -> None:
    (backup,) = _remember(engine, BACKUP)
    _recall(engine, "when does the backup run?")
    _recall(engine, "when does the backup run?")
    engine.maintenance.run()
    client.delete(engine.store.memories.recalls.key(backup))  # what its expiry does a day later
    assert engine.memories.get(backup).recall_count == 2
    _recall(engine, "when does the backup run?")
    assert engine.memories.get(backup).recall_count == 3


def test_delete_project_removes_the_counters_of_the_memories_it_deletes(
    engine: Engine, client: valkey.Valkey
) -> None:
    backup, deploy = _remember(engine, BACKUP, DEPLOY)
    other = engine.memories.remember(Draft(LINT, project="elsewhere"), actor="a").key
    recalls = engine.store.memories.recalls
    _recall(engine, "when does the backup run?")
    _recall(engine, "how do production deploys go out?")
    assert [
        h.memory.key
        for h in engine.recaller.recall(
            RecallRequest("how is the linter run?", projects=["elsewhere"], top_k=1)
        ).hits
    ] == [other]
    # the raw read below does not wait for the touches written behind
    engine.store.recall_writes.flush()
    assert client.exists(recalls.key(backup), recalls.key(deploy), recalls.key(other)) == 3
    done = engine.lifecycle.delete_project("p", confirm=True, actor="a", reason="retired")
    assert isinstance(done, ProjectDone)
    assert done.affected == 2
    assert client.exists(recalls.key(backup), recalls.key(deploy)) == 0
    # positive control: another project's counter stays
    assert client.exists(recalls.key(other)) == 1
