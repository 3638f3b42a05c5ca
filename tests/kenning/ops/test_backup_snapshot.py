"""A backup is a snapshot per memory, exact in its times, and sealed (docs/reliability.md,
"Backups"): written while other threads rewrite memories, every entry's vector is the embedding of
the entry's own text; a dry-run restore straight after a backup plans nothing; an edited file is
refused before anything is planned. The 20k run is bench/probes/backup_under_writes.py."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
import valkey

from kenning.core.clock import ManualClock
from kenning.core.errors import Conflict, InvalidInput
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.runtime.embedding import Embedder
from kenning.store import vectors
from tests.conftest import make_settings

MEMORIES = 200
WRITERS = 3


@pytest.fixture
def engine(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    tmp_path: Path,
) -> Iterator[Engine]:
    """An engine whose backup directory belongs to this test alone."""
    own = make_settings(
        settings.data_dir,
        settings.valkey_port,
        key_prefix=settings.key_prefix,
        backup_dir=tmp_path / "backups",
    )
    opened = Engine.open(own, client, embedder, clock=clock)
    yield opened
    opened.close()


def _texts(n: int) -> str:
    return f"Service number {n} listens on port {8000 + n} behind the internal gateway"


def _moved(n: int, round_: int) -> str:
    zone = ("north", "south")[round_ % 2]
    return f"Moved in round {round_}: service {n} now runs in the {zone} zone"


def _seed(engine: Engine, clock: ManualClock, count: int) -> list[str]:
    keys = []
    for n in range(count):
        clock.advance(0.123456789)  # times with every decimal a float carries
        keys.append(
            engine.memories.remember(
                Draft(_texts(n), project="fleet"), actor="seed", allow_duplicate=True
            ).key
        )
    return keys


def test_a_backup_during_rewrites_holds_one_version_of_each_memory(
    engine: Engine, clock: ManualClock
) -> None:
    keys = _seed(engine, clock, MEMORIES)
    stop, first_round = threading.Event(), threading.Barrier(WRITERS + 1)
    rewrites = [0] * WRITERS

    def rewrite(w: int) -> None:
        round_ = 0
        while not stop.is_set():
            round_ += 1
            for n in range(w, MEMORIES, WRITERS):
                if stop.is_set():
                    return
                engine.memories.update(keys[n], _moved(n, round_), actor=f"w{w}")
                rewrites[w] += 1
            if round_ == 1:  # every memory rewritten once before the backup starts
                first_round.wait()

    writers = [threading.Thread(target=rewrite, args=(w,)) for w in range(WRITERS)]
    for thread in writers:
        thread.start()
    first_round.wait()
    before = sum(rewrites)
    try:
        made = engine.backups.backup(vectors=True, actor="admin")
    finally:
        after = sum(rewrites)
        stop.set()
        for thread in writers:
            thread.join()
    assert after > before  # positive control: the store was rewritten while the backup ran
    entries = json.loads(Path(made.path).read_text(encoding="utf-8"))["memories"]
    assert len(entries) == MEMORIES
    torn, moved = 0, 0
    for entry in entries:
        text = entry["fields"]["content"]
        moved += text.startswith("Moved")
        stored = np.frombuffer(base64.b64decode(entry["vector"]), dtype="<f4")
        written = vectors.spread(entry["key"], engine.ctx.embedder.embed(text))  # as stored
        torn += float(np.max(np.abs(stored - written))) > 1e-4
    assert torn == 0
    assert moved == MEMORIES  # positive control: the file holds rewritten memories
    # and a vector of another version would have been seen: two versions embed far apart
    apart = engine.ctx.embedder.embed(_texts(0)) - engine.ctx.embedder.embed(_moved(0, 1))
    assert float(np.max(np.abs(apart))) > 1e-2


def test_a_dry_run_restore_straight_after_a_backup_plans_nothing(
    engine: Engine, clock: ManualClock
) -> None:
    keys = _seed(engine, clock, 20)
    engine.memories.retag(keys[0], add=["edge"], actor="a")
    made = engine.backups.backup(vectors=True, actor="admin")
    stored = {k: engine.store.memories.read(k) for k in keys}
    entries = json.loads(Path(made.path).read_text(encoding="utf-8"))["memories"]
    for entry in entries:  # every time exactly as stored, not rounded
        memory = stored[entry["key"]]
        assert memory is not None
        # an update time equal to the creation is left out of the hash and of its backup
        assert float(entry["fields"].get("updated_at", "nan")) == memory.updated_at or (
            "updated_at" not in entry["fields"] and memory.updated_at == memory.created_at
        )
        assert float(entry["fields"]["created_at"]) == memory.created_at
    assert "updated_at" in next(e["fields"] for e in entries if e["key"] == keys[0])  # retagged
    plan = engine.backups.restore(Path(made.path), actor="admin")
    assert plan.memories == {"add": 0, "update": 0, "skip": 20}
    clock.advance(0.001)  # positive control: a change a thousandth of a second later is seen
    engine.memories.update(keys[1], "Service number 1 moved behind the edge proxy", actor="a")
    engine.memories.forget(keys[2], confirm=True, actor="a")
    again = engine.backups.restore(Path(made.path), actor="admin")
    assert again.memories == {"add": 1, "update": 0, "skip": 19}


def test_an_edited_backup_is_refused_with_a_clear_message(
    engine: Engine, clock: ManualClock
) -> None:
    keys = _seed(engine, clock, 3)
    made = engine.backups.backup(vectors=True, actor="admin")
    path = Path(made.path)
    data = json.loads(path.read_text(encoding="utf-8"))
    assert engine.backups.restore(path, actor="admin").memories["skip"] == 3  # as written: fine
    audit_before = len(engine.history.audit_log(limit=500).events)
    edited = dict(data, memories=[dict(e) for e in data["memories"]])
    edited["memories"][0]["fields"] = {**data["memories"][0]["fields"], "content": "We use Heroku"}
    unsealed = {k: v for k, v in data.items() if k != "checksum"}
    for name, changed, reason in (
        ("edited", edited, "does not match its checksum"),
        ("unsealed", unsealed, "has no checksum"),
    ):
        bad = path.with_name(f"kenning-backup-20260101T000000Z-{name}.json")
        bad.write_text(json.dumps(changed), encoding="utf-8")
        with pytest.raises(InvalidInput, match=reason) as refused:
            engine.backups.restore(bad, dry_run=False, actor="admin")
        assert "changed after Kenning wrote it" in str(refused.value)
    # reformatting alone (whitespace, key order) keeps the seal
    pretty = path.with_name("kenning-backup-20260101T000000Z-pretty.json")
    pretty.write_text(json.dumps(data, indent=2), encoding="utf-8")
    assert engine.backups.restore(pretty, actor="admin").memories["skip"] == 3
    assert len(engine.history.audit_log(limit=500).events) == audit_before
    assert engine.memories.get(keys[0]).content == _texts(0)


def test_a_backup_retried_with_its_idempotency_key_writes_one_file(
    engine: Engine, clock: ManualClock
) -> None:
    _seed(engine, clock, 3)
    key, label = "backup-2026-12-03-a", "idem"

    def backing(_: int) -> str:
        made = engine.backups.backup(vectors=True, label=label, actor="admin", idempotency_key=key)
        return made.file

    with ThreadPoolExecutor(4) as pool:  # at once: the write runs once, the others wait for it
        files = set(pool.map(backing, range(4)))
    clock.advance(5)  # a later retry would name a new file; the key returns the first one
    files.add(backing(0))
    assert len(files) == 1
    assert [b.file for b in engine.backups.list_backups()] == list(files)
    assert len(engine.store.audit.recent(action="backup")) == 1
    with pytest.raises(Conflict, match="different backup request"):
        engine.backups.backup(vectors=False, label=label, actor="admin", idempotency_key=key)
    with pytest.raises(InvalidInput, match="idempotency key"):
        engine.backups.backup(actor="admin", idempotency_key="short")
    other = engine.backups.backup(label=label, actor="admin", idempotency_key="backup-2026-12-03-b")
    assert other.file not in files  # positive control: a new key is a new backup
