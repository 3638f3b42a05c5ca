"""`kenning import --from PEER`: each peer's store read as it lies on disk (fixtures in peers/,
README there says which the peer's own package made), a dry run that writes nothing, the import,
recall finding what the source held, and a second import that stores nothing new."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from kenning.core.errors import InvalidInput
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory import peers
from kenning.memory.listing import Listing
from kenning.memory.recall import RecallRequest
from kenning_cli.main import load_commands, main

load_commands()
HERE = Path(__file__).with_name("peers")
# peer -> (memories its fixture holds, a question, words of the answer)
CASES = {
    "mcp-server-memory": (6, "what language is shop-api written in?", "Go 1.23"),
    "mcp-memory-service": (4, "why did we pick Valkey for sessions?", "license change"),
    "claude-mem": (5, "how was the flaky checkout test fixed?", "frozen clock"),
    "basic-memory": (6, "what do mapping changes of the search indexer need?", "alias swap"),
    "mem0": (3, "how does the offline sync store its data?", "CRDTs"),
}


def fixture(peer: str, tmp_path: Path) -> Path:
    if peer in ("mcp-memory-service", "claude-mem"):
        db = tmp_path / f"{peer}.db"
        with sqlite3.connect(db) as conn:
            conn.executescript((HERE / f"{peer}.sql").read_text(encoding="utf-8"))
        return db
    return HERE / {"mcp-server-memory": "mcp-server-memory.jsonl", "mem0": "mem0.json"}.get(
        peer, "basic-memory"
    )


@pytest.mark.parametrize("peer", sorted(CASES))
def test_a_peer_store_reads_into_rows_with_provenance(peer: str, tmp_path: Path) -> None:
    rows = [json.loads(line) for line in peers.read(peer, fixture(peer, tmp_path)).splitlines()]
    assert len(rows) == CASES[peer][0]
    for row in rows:
        assert row["source"].startswith(f"{peer}:")
        assert row["tags"][0] == f"from:{peer}"
        assert row["content"]


def test_what_each_reader_maps(tmp_path: Path) -> None:
    graph = [
        json.loads(x)
        for x in peers.read(
            "mcp-server-memory", fixture("mcp-server-memory", tmp_path)
        ).splitlines()
    ]
    assert {
        "content": "Dana owns shop-api",
        "source": "mcp-server-memory:relation/Dana owns shop-api",
        "tags": ["from:mcp-server-memory", "relation"],
    } in graph
    service = [
        json.loads(x)
        for x in peers.read(
            "mcp-memory-service", fixture("mcp-memory-service", tmp_path)
        ).splitlines()
    ]
    assert not any("Docker Swarm" in r["content"] for r in service)  # deleted in the peer
    assert [r["namespace"] for r in service] == ["episodic", "episodic", "knowledge", "preference"]
    assert service[0]["valid_from"] == "2024-06-01T00:00:00+00:00"
    mem = [
        json.loads(x)
        for x in peers.read("claude-mem", fixture("claude-mem", tmp_path)).splitlines()
    ]
    assert mem[0]["project"] == "shop-api"  # the peer's "Shop-API", as Kenning names projects
    assert mem[0]["content"].startswith("Flaky checkout test fixed: The checkout test was flaky")
    assert mem[0]["valid_from"] == "2025-03-02T10:00:00+00:00"  # epoch milliseconds read


def test_a_store_of_another_kind_is_refused_with_what_was_found(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="no observations table"):
        peers.read("claude-mem", fixture("mcp-memory-service", tmp_path))
    with pytest.raises(InvalidInput, match="not a SQLite database"):
        peers.read("mcp-memory-service", HERE / "mem0.json")
    with pytest.raises(InvalidInput, match="unknown source"):
        peers.read("letta", tmp_path)


@pytest.mark.parametrize("peer", sorted(CASES))
def test_dry_run_import_and_recall(
    peer: str,
    engine: Engine,
    settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    count, question, answer = CASES[peer]
    path = fixture(peer, tmp_path)
    _env(monkeypatch, tmp_path, settings)
    assert main(["import", "--from", peer, str(path), "--dry-run"]) == 0
    assert f"would store {count}" in capsys.readouterr().out
    assert engine.memories.list(Listing(tags=(f"from:{peer}",))).total == 0  # nothing written
    assert main(["import", "--from", peer, str(path)]) == 0
    assert f"stored {count}" in capsys.readouterr().out
    assert engine.memories.list(Listing(tags=(f"from:{peer}",))).total == count
    hits = engine.recaller.recall(RecallRequest(question, projects=None)).hits
    assert answer in hits[0].memory.content
    assert str(hits[0].memory.source).startswith(f"{peer}:")
    events = [e for e in engine.ctx.store.audit.recent(action="import") if e.details]
    assert events[0].details["source"] == f"{peer}:{path}"
    assert main(["import", "--from", peer, str(path)]) == 0  # again: nothing new
    assert f"stored 0, {count} duplicates" in capsys.readouterr().out


def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Settings) -> None:
    monkeypatch.chdir(tmp_path)
    for name, value in (
        ("DATA_DIR", settings.data_dir),
        ("VALKEY_PORT", settings.valkey_port),
        ("KEY_PREFIX", settings.key_prefix),
        ("LOG_LEVEL", "WARNING"),
    ):
        monkeypatch.setenv(f"KENNING_{name}", str(value))
