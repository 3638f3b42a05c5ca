"""The append-only file compacted with writes paused (kenning/store/persistence.py).

First the hazard, on the real module: valkey-search 1.2.1 stops answering for good when a search
comes during a fork (an AOF rewrite, as Valkey's automatic one) while a script's write is queued
for the index (valkey-io/valkey-search#1260) -- and Kenning writes through scripts. RediSearch
answers the same sequence. Then Kenning's compaction on both engines: searches answered during
the rewrite, a write waits for it and lands after, the file rewritten. Each test runs its own
server (the first is left deadlocked and killed), made slow to rewrite (``rdb-key-save-delay``)
so that the fork's window is seconds long, not a race.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import valkey

from kenning.core.errors import StoreError
from kenning.core.query import MATCH_ALL
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.ops import doctor
from kenning.ops.embedded import EmbeddedValkey, default_module
from kenning.runtime.embedding import Embedder
from kenning.store import REDISEARCH, VALKEY_SEARCH, AofState, connect, persistence
from kenning_cli.main import main
from tests.conftest import free_port, make_settings, point_cli, valkey_search_path

pytestmark = pytest.mark.single_server  # private servers; the last test reads a server's config

FILLER = 3_000  # keys the rewrite saves one by one ...
DELAY_US = 700  # ... this long each: a fork window of about two seconds


def _module(name: str) -> Path:
    return valkey_search_path() if name == VALKEY_SEARCH else default_module()


@pytest.fixture
def private(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[EmbeddedValkey]:
    settings = make_settings(
        tmp_path, free_port(), search_module=_module(request.param), key_prefix="aof:"
    )
    server = EmbeddedValkey(settings)
    with server:
        yield server


def _slow(client: Any) -> None:
    """Filler keys and a delay per key saved: the rewrite's child lives about two seconds."""
    pipe = client.pipeline(transaction=False)
    for i in range(FILLER):
        pipe.set(f"filler:{i}", "x" * 32)
    pipe.execute()
    client.config_set("rdb-key-save-delay", DELAY_US)


def _search(client: Any, index: str) -> Any:
    return client.execute_command("FT.SEARCH", index, MATCH_ALL, "LIMIT", "0", "0", "DIALECT", "2")


def _rewriting(client: Any) -> bool:
    return bool(int(client.info("persistence")["aof_rewrite_in_progress"]))


def _await_rewrite(client: Any) -> None:
    """Until the rewrite's child is running (it forks within milliseconds)."""
    until = time.monotonic() + 10
    while not _rewriting(client) and time.monotonic() < until:
        time.sleep(0.01)
    assert _rewriting(client)


def _opened(server: EmbeddedValkey, embedder: Embedder) -> tuple[Engine, Any]:
    engine = Engine.open(server.settings, connect(server.settings), embedder)
    engine.memories.remember(Draft("Deploys go out on Tuesdays", project="ops"), actor="t")
    return engine, valkey.Valkey.from_url(server.url, socket_timeout=3)


def _slowed(server: EmbeddedValkey, embedder: Embedder) -> tuple[Engine, Any, str]:
    """``_opened`` on a server whose rewrites take about two seconds (``_slow``), and the index."""
    engine, raw = _opened(server, embedder)
    _slow(raw)
    return engine, raw, engine.ctx.index


@pytest.mark.parametrize("private", [VALKEY_SEARCH, REDISEARCH], indirect=True)
def test_a_search_during_a_fork_with_a_script_write_queued_deadlocks_valkey_search(
    private: EmbeddedValkey, embedder: Embedder
) -> None:
    engine, raw, index = _slowed(private, embedder)
    assert _search(raw, index)[0] == 1  # the positive control: the server answers searches
    raw.bgrewriteaof()  # what Valkey's automatic rewrite does when the file has doubled
    _await_rewrite(raw)
    # a remember: its own searches, then its write as a script (queued for the index)
    engine.memories.remember(Draft("Backups run at 02:00", project="ops"), actor="t")
    found = engine.store.search_module()
    assert found is not None
    if found.name == REDISEARCH:
        assert _search(raw, index)[0] == 2  # RediSearch has no such queue: it answers
        engine.close()
        return
    with pytest.raises(valkey.exceptions.TimeoutError):
        _search(raw, index)  # valkey-search 1.2.1: the main thread waits forever
    time.sleep(3)  # the rewrite's child is long done ...
    with pytest.raises(valkey.exceptions.TimeoutError):
        valkey.Valkey.from_url(private.url, socket_timeout=1).ping()  # ... and nothing answers
    assert private.process is not None
    private.process.kill()  # SIGTERM is never served either


@pytest.mark.parametrize("private", [VALKEY_SEARCH, REDISEARCH], indirect=True)
def test_compaction_pauses_writes_so_searches_answer_during_the_rewrite(
    private: EmbeddedValkey, embedder: Embedder
) -> None:
    engine, raw, index = _slowed(private, embedder)
    assert engine.store.forks() == []  # Kenning's Valkey never forks on its own
    assert engine.store.compact_aof() is None  # not due: a small file
    before = engine.store.aof_state()
    done: list[Any] = []
    compacting = threading.Thread(target=lambda: done.append(engine.store.compact_aof(force=True)))
    compacting.start()
    _await_rewrite(raw)
    written: list[str] = []
    writer = threading.Thread(
        target=lambda: written.append(
            engine.memories.remember(Draft("Backups run at 02:00", project="ops"), actor="t").key
        )
    )
    writer.start()
    answered = [_search(raw, index)[0] for _ in range(5)]  # in the fork's window
    assert _rewriting(raw)
    assert answered == [1] * 5  # the write waits: the searches answer, without it
    assert written == []
    compacting.join(timeout=60)
    writer.join(timeout=60)
    (compacted,) = done
    assert compacted is not None
    assert compacted.servers == 1
    assert compacted.paused_seconds > 1.0
    assert len(written) == 1  # it landed once writes resumed
    assert _search(raw, index)[0] == 2
    after = engine.store.aof_state()
    assert (after.enabled, after.rewriting) == (True, False)
    assert after.base > 0
    assert after.base != before.base  # a new base file: the rewrite happened
    engine.close()


@pytest.mark.parametrize("private", [VALKEY_SEARCH], indirect=True)
def test_compaction_drains_every_index_on_the_server_not_only_its_own(
    private: EmbeddedValkey, embedder: Embedder
) -> None:
    """valkey-search queues script writes per index: another prefix's index (or a rebuild's
    second generation) with a write queued would deadlock a search of it during the fork,
    unless the drain searched it too."""
    engine, raw, _ = _slowed(private, embedder)
    other_settings = private.settings.model_copy(update={"key_prefix": "other:"})
    other = Engine.open(other_settings, connect(other_settings), embedder)
    other.memories.remember(Draft("Standups are at 09:30", project="team"), actor="t")
    assert _search(raw, other.ctx.index)[0] == 1  # the positive control: it answers, drained
    # a write queued for the other index only (the hazard of the deadlock test, on that index)
    other.memories.remember(Draft("Retros are on Fridays", project="team"), actor="t")
    done: list[Any] = []
    compacting = threading.Thread(target=lambda: done.append(engine.store.compact_aof(force=True)))
    compacting.start()
    _await_rewrite(raw)
    assert _search(raw, other.ctx.index)[0] == 2  # in the fork's window: it answers
    assert _rewriting(raw)
    compacting.join(timeout=60)
    (compacted,) = done
    assert compacted is not None
    assert compacted.servers == 1
    other.close()
    engine.close()


@pytest.mark.parametrize("private", [VALKEY_SEARCH, REDISEARCH], indirect=True)
def test_an_index_of_another_application_stops_the_compaction_on_valkey_search_only(
    private: EmbeddedValkey, embedder: Embedder
) -> None:
    engine, raw = _opened(private, embedder)
    first = engine.store.compact_aof(force=True)
    assert first is not None  # the positive control: with Kenning's index alone it rewrites
    raw.execute_command(
        "FT.CREATE", "foreign", "ON", "HASH", "PREFIX", "1", "foreign:", "SCHEMA", "title", "TAG"
    )
    before = engine.store.aof_state()
    found = engine.store.search_module()
    assert found is not None
    if found.name == REDISEARCH:  # no queue to drain: the foreign index is no obstacle
        again = engine.store.compact_aof(force=True)
        assert again is not None
        assert engine.store.aof_state().base != before.base
        engine.close()
        return
    with pytest.raises(StoreError, match="index 'foreign' is not Kenning's") as raised:
        engine.store.compact_aof(force=True)
    assert raised.value.hint is not None
    assert "stopped" in raised.value.hint
    assert engine.store.aof_state().base == before.base  # nothing was rewritten
    assert not _rewriting(raw)
    # and writes were resumed: a remember lands at once
    engine.memories.remember(Draft("Backups run at 02:00", project="ops"), actor="t")
    assert _search(raw, engine.ctx.index)[0] == 2
    engine.close()


class _Reply:
    """A server answering INFO persistence with ``fields`` (the reply's parsing, alone)."""

    def __init__(self, fields: dict[str, str]) -> None:
        self.fields = fields

    def execute_command(self, *args: str) -> dict[str, str]:
        assert args == ("INFO", "persistence")
        return self.fields


def test_a_server_that_does_not_report_its_aof_is_an_error_not_aof_off() -> None:
    reported = {"aof_enabled": "1", "aof_current_size": "300", "aof_base_size": "100"}
    reported |= {"aof_rewrite_in_progress": "0", "aof_rewrite_scheduled": "0"}
    # the positive control: the fields Valkey reports are read
    assert persistence.state(_Reply(reported)) == AofState(True, 300, 100, False)
    with pytest.raises(StoreError, match="no aof_enabled field"):
        persistence.state(_Reply({"loading": "0"}))


@pytest.mark.parametrize("private", [VALKEY_SEARCH], indirect=True)
def test_the_doctor_fails_a_valkey_search_that_forks_on_its_own(
    private: EmbeddedValkey, embedder: Embedder
) -> None:
    engine, raw = _opened(private, embedder)
    assert doctor.forks(engine.store).ok  # the positive control: Kenning's configuration
    raw.config_set("auto-aof-rewrite-percentage", 100)  # Valkey's default
    raw.config_set("save", "3600 1")
    check = doctor.forks(engine.store)
    assert not check.ok
    assert 'auto-aof-rewrite-percentage 100; save "3600 1"' in check.detail
    assert "valkey-io/valkey-search#1260" in check.detail
    engine.close()


def test_the_file_is_due_when_it_has_doubled_past_the_minimum() -> None:
    mb = 1024 * 1024
    assert AofState(True, 130 * mb, 64 * mb, False).due()
    assert not AofState(True, 120 * mb, 64 * mb, False).due()  # not doubled
    assert not AofState(True, 40 * mb, 10 * mb, False).due()  # under the minimum
    assert not AofState(True, 130 * mb, 64 * mb, True).due()  # a rewrite is running
    assert not AofState(False, 130 * mb, 64 * mb, False).due()  # no AOF
    assert AofState(True, 3 * mb, 1 * mb, False).due(min_bytes=2 * mb)
    assert AofState(False, 0, 0, False).idle() == "the append-only file is off"
    assert AofState(True, 130 * mb, 64 * mb, True).idle() == "a rewrite is already running"
    assert AofState(True, 40 * mb, 10 * mb, False).idle() == "not due"


def test_settings_stay_kennings_own(settings: Settings) -> None:
    """The suite's server runs Kenning's configuration too: no automatic rewrite, no snapshot."""
    client = connect(settings)
    assert client.config_get("auto-aof-rewrite-percentage") == {"auto-aof-rewrite-percentage": "0"}
    assert client.config_get("save") == {"save": ""}
    client.close()  # type: ignore[no-untyped-call]


@pytest.mark.parametrize("private", [REDISEARCH], indirect=True)
def test_the_scheduled_maintenance_rewrites_the_file_once_it_is_due(
    private: EmbeddedValkey, embedder: Embedder
) -> None:
    engine, raw = _opened(private, embedder)
    first = engine.maintenance.run(actor="t")
    assert first.aof is None  # the positive control: a small file is not due
    assert "aof" not in first.public()
    pipe = raw.pipeline(transaction=False)
    for i in range(70):  # 70 MB appended: past the minimum, far past twice the last rewrite
        pipe.set(f"bulk:{i}", "y" * (1024 * 1024))
    pipe.execute()
    assert engine.store.aof_state().due()
    report = engine.maintenance.run(actor="t")
    assert report.aof is not None
    assert report.aof.servers == 1
    assert report.aof.before >= 64 * 1024 * 1024
    assert report.aof.after < report.aof.before  # the same data, rewritten compactly
    assert report.public()["aof"]["before"] == report.aof.before
    assert not engine.store.aof_state().due()
    assert engine.maintenance.run(actor="t").aof is None  # and not again
    engine.close()


@pytest.mark.parametrize("private", [VALKEY_SEARCH], indirect=True)
def test_kenning_compact_rewrites_now_and_if_due_only_when_due(
    private: EmbeddedValkey,
    embedder: Embedder,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    engine, _ = _opened(private, embedder)
    engine.close()
    point_cli(monkeypatch, private.settings)
    before = engine.store.aof_state()
    assert main(["compact", "--if-due"]) == 0  # a small file: not due, nothing rewritten
    said = capsys.readouterr().out
    assert said.startswith("nothing rewritten: not due ("), said
    assert engine.store.aof_state().base == before.base
    assert main(["compact"]) == 0
    said = capsys.readouterr().out
    assert said.startswith("rewrote the append-only file: "), said
    assert "writes waited" in said
    assert engine.store.aof_state().base != before.base  # a new base file
