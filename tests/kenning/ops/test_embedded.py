"""The embedded Valkey child process: module loaded, lock, port, missing files, AOF durability."""

from __future__ import annotations

import os
import signal
import socket
import stat
from pathlib import Path

import pytest

from kenning.core.clock import ManualClock
from kenning.core.errors import Conflict, KenningError
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder
from kenning.store import Store, connect
from tests.conftest import free_port, make_settings

TOPICS = [
    "The staging database is PostgreSQL 16 on port 5433.",
    "Deploys go through Kamal to the Hetzner box every Friday.",
    "We format Python with ruff format; black is not used any more.",
    "The frontend bundle is built with Vite 7.",
    "Flaky test test_upload is caused by a race in the temp dir cleanup.",
    "Secrets live in 1Password, never in the repository.",
]


def test_session_server_has_the_search_module(valkey_server: EmbeddedValkey) -> None:
    store = Store(connect(valkey_server.settings), "kenning:")
    assert "search" in store.modules()
    mode = stat.S_IMODE((valkey_server.dir / "password").stat().st_mode)
    assert mode == 0o600


def test_second_launch_on_the_same_data_dir_is_refused(valkey_server: EmbeddedValkey) -> None:
    other = EmbeddedValkey(make_settings(valkey_server.settings.data_dir, free_port()))
    with pytest.raises(Conflict, match="in use"):
        other.start()


def test_taken_port_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        server = EmbeddedValkey(make_settings(tmp_path, port))
        with pytest.raises(Conflict, match=f"port {port}"):
            server.start()
    # the failed start released its lock: a start on a free port now works
    with EmbeddedValkey(make_settings(tmp_path, free_port())) as again:
        assert again.alive()


@pytest.mark.parametrize("which", ["valkey_binary", "search_module"])
def test_missing_binary_or_module_is_a_clear_error(tmp_path: Path, which: str) -> None:
    settings = make_settings(tmp_path, free_port(), **{which: tmp_path / "nope.so"})
    with pytest.raises(KenningError, match="not found"):
        EmbeddedValkey(settings).start()


def test_sigterm_shuts_down_cleanly(tmp_path: Path) -> None:
    server = EmbeddedValkey(make_settings(tmp_path, free_port()))
    server.start()
    process = server.process
    assert process is not None
    server.stop()
    assert process.returncode == 0


def test_killed_server_loses_no_acknowledged_memory(tmp_path: Path, embedder: Embedder) -> None:
    settings = make_settings(tmp_path, free_port())
    server = EmbeddedValkey(settings)
    server.start()
    engine = Engine.open(settings, connect(settings), embedder, clock=ManualClock())
    keys = [engine.memories.remember(Draft(text), actor="t").key for text in TOPICS]
    assert server.process is not None
    os.kill(server.process.pid, signal.SIGKILL)  # no shutdown, no final flush
    server.process.wait()
    server.stop()

    with EmbeddedValkey(settings):
        reopened = Engine.open(settings, connect(settings), embedder, clock=ManualClock())
        assert [reopened.memories.get(k).content for k in keys] == TOPICS
        result = reopened.recaller.recall(
            RecallRequest("which tool formats our Python code?", top_k=3)
        )
        assert result.hits[0].memory.key == keys[2]


def test_valkey_command_starts_nothing_when_an_external_url_is_set(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from kenning_cli.main import main

    monkeypatch.setenv("KENNING_VALKEY_URL", "redis://:pw@127.0.0.1:1/0")
    assert main(["valkey"]) == 2
    assert "KENNING_VALKEY_URL is set" in capsys.readouterr().err


def test_memory_hashes_with_their_vector_stay_compact_listpacks(
    valkey_server: EmbeddedValkey,
) -> None:
    client = connect(valkey_server.settings)
    assert client.config_get("hash-max-listpack-value") == {"hash-max-listpack-value": "4096"}
    client.hset("listpack-probe", mapping={"content": "short", "vector": b"\0" * 1536})
    assert client.object("encoding", "listpack-probe") == b"listpack"
    # positive control: past the limit it converts
    client.hset("listpack-probe", "content", "x" * 5000)
    assert client.object("encoding", "listpack-probe") == b"hashtable"
    client.delete("listpack-probe")
