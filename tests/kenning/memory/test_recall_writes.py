"""A recall's log entry and counter touches are written behind its reply (Store.log_recall): the
counts in the reply, read-your-writes for readers in the same process, close drains, an outage
during the write, and a full queue writing in the recall itself. Real Valkey; the write is held
back with CLIENT PAUSE WRITE (reads go on, the writer's commands wait in the server)."""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import valkey

from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder
from kenning.store import Store, connect
from tests.conftest import free_port, make_settings

BACKUP = "The nightly backup job copies the Valkey AOF to object storage at 02:00 UTC."
DEPLOY = "Production deploys go out with Kamal from the main branch every Tuesday."
QUESTION = "when does the backup run?"
WAIT = 30.0


def _remember(engine: Engine, text: str) -> str:
    return engine.memories.remember(Draft(text, project="p"), actor="a").key


def _counts(engine: Engine, text: str = QUESTION) -> list[tuple[str, int]]:
    hits = engine.recaller.recall(RecallRequest(text, projects=["p"], top_k=1)).hits
    return [(h.memory.key, h.memory.recall_count) for h in hits]


def _stored(client: valkey.Valkey, engine: Engine, key: str) -> int | None:
    """The counter key's count as Valkey holds it (a raw read: it does not
    wait for pending writes)."""
    raw: Any = client.hget(engine.store.memories.recalls.key(key), "count")
    return None if raw is None else int(raw)


def _logged(client: valkey.Valkey, engine: Engine) -> int:
    raw: Any = client.xlen(engine.store.recall_log.key)
    return int(raw)


@contextmanager
def _writes_held(client: valkey.Valkey) -> Iterator[None]:
    """Valkey holds every write command (the recall's reads go on) until the block ends."""
    client.client_pause(60_000, all=False)
    try:
        yield
    finally:
        client.client_unpause()


def test_the_reply_counts_are_the_stored_counts_once_written(
    engine: Engine, client: valkey.Valkey
) -> None:
    backup, deploy = _remember(engine, BACKUP), _remember(engine, DEPLOY)
    shown = [_counts(engine) for _ in range(4)]
    assert shown == [[(backup, n)] for n in (1, 2, 3, 4)]  # each recall sees the ones before it
    engine.store.recall_writes.flush()
    assert (_stored(client, engine, backup), _stored(client, engine, deploy)) == (4, None)
    assert engine.memories.get(backup).recall_count == 4
    assert _logged(client, engine) == 4


def test_the_write_is_behind_the_reply_and_a_reader_waits_for_it(
    engine: Engine, client: valkey.Valkey
) -> None:
    backup = _remember(engine, BACKUP)
    with _writes_held(client):
        # the reply came back while Valkey held the write ...
        assert _counts(engine) == [(backup, 1)]
        assert engine.store.recall_writes.pending() == 1
        # ... not written yet
        assert (_stored(client, engine, backup), _logged(client, engine)) == (None, 0)
        threading.Thread(target=client.client_unpause).start()
        mentioned = engine.recall_log.why_did_you_mention("object storage")  # waits for the write
    assert [m["query"] for m in mentioned.mentions] == [QUESTION]
    assert engine.store.recall_writes.pending() == 0


def test_close_writes_what_is_pending_then_recalls_write_in_place(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    engine = Engine.open(settings, client, embedder, clock=clock)
    backup = _remember(engine, BACKUP)
    with _writes_held(client):
        assert _counts(engine) == [(backup, 1)]
        assert engine.store.recall_writes.pending() == 1
        threading.Thread(target=client.client_unpause).start()
        engine.close()
    assert (_stored(client, engine, backup), _logged(client, engine)) == (1, 1)
    assert _counts(engine) == [(backup, 2)]
    # written before the reply
    assert (_stored(client, engine, backup), _logged(client, engine)) == (2, 2)


def test_a_full_queue_writes_in_the_caller(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    """Store.log_recall with its queue full (the store's own reads would wait for the queued
    jobs, so the recall's last step is called directly)."""
    engine = Engine.open(
        settings, Store(client, settings.key_prefix, recall_queue=1), embedder, clock=clock
    )
    backup = _remember(engine, BACKUP)
    memory = engine.memories.get(backup)
    busy, release = threading.Event(), threading.Event()

    def occupy() -> None:
        busy.set()
        release.wait(WAIT)

    engine.store.recall_writes.submit(occupy)  # occupies the thread ...
    assert busy.wait(WAIT)
    assert engine.store.recall_writes.submit(lambda: None)  # ... and this fills the queue of one
    try:
        entry = functools.partial(engine.recall_log.entry, QUESTION, [], actor="a", projects=())
        counted = engine.store.log_recall(entry, 100, [memory], clock.now())
        assert [(m.key, m.recall_count) for m in counted] == [(backup, 1)]
        # written in the call
        assert (_stored(client, engine, backup), _logged(client, engine)) == (1, 1)
        assert engine.store.recall_writes.pending() == 2  # while both queued jobs still wait
    finally:
        release.set()
        engine.close()


def test_a_refused_log_entry_is_retried_alone_and_counted(
    engine: Engine, client: valkey.Valkey
) -> None:
    """The log's stream key holds a string: its XADD fails on both
    attempts, the touches land once."""
    backup = _remember(engine, BACKUP)
    client.set(engine.store.recall_log.key, "not a stream")
    assert _counts(engine) == [(backup, 1)]  # the reply is whole
    engine.store.recall_writes.flush()
    assert engine.store.recall_writes.failures == 1
    assert _stored(client, engine, backup) == 1  # the retry did not send the touch that had landed
    client.delete(engine.store.recall_log.key)
    assert _counts(engine) == [(backup, 2)]  # recovered: the next one is written whole
    engine.store.recall_writes.flush()
    assert (
        _stored(client, engine, backup),
        _logged(client, engine),
        engine.store.recall_writes.failures,
    ) == (2, 1, 1)


def test_an_outage_during_the_write_keeps_the_reply_and_is_counted(
    tmp_path: Path, embedder: Embedder
) -> None:
    settings = make_settings(tmp_path, free_port())
    server = EmbeddedValkey(settings)
    server.start()
    conn = connect(settings)
    engine = Engine.open(settings, conn, embedder)
    failed: list[int] = []
    engine.store.recall_writes.observers.append(
        lambda: failed.append(engine.store.recall_writes.failures)
    )
    try:
        backup = _remember(engine, BACKUP)
        assert _counts(engine) == [(backup, 1)]  # positive control: written behind, nothing failed
        engine.store.recall_writes.flush()
        assert engine.store.recall_writes.failures == 0
        conn.client_pause(60_000, all=False)
        # the reply is whole; its write waits in the server ...
        assert _counts(engine) == [(backup, 2)]
        server.stop()  # ... which goes away: the write and its retry fail
        engine.store.recall_writes.flush()
        assert (engine.store.recall_writes.failures, failed) == (1, [1])
        server.start()  # recovered (AOF): the next recall works, its write lands
        assert _counts(engine) == [(backup, 2)]  # the lost touch is not counted
        assert engine.memories.get(backup).recall_count == 2
        assert engine.store.recall_writes.failures == 1
    finally:
        engine.close()
        conn.close()  # type: ignore[no-untyped-call]
        server.stop()
