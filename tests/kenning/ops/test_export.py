"""The lossless export (kenning/ops/export.py, `kenning export`): export -> `kenning import --from
kenning` into a fresh store gives the same memories field by field (state, trust, valid time,
tags, links, counters), a plain `kenning import` of the same file takes its readable fields, and a
dry run on an unchanged store plans nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import valkey

from kenning.core.clock import ManualClock
from kenning.core.models import STATES
from kenning.core.schema import encode
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.experience import Approach, Report
from kenning.memory.listing import Listing
from kenning.memory.memories import Draft
from kenning.runtime.embedding import Embedder
from kenning_cli.main import load_commands, main
from tests.conftest import make_settings

load_commands()


def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Settings) -> None:
    monkeypatch.chdir(tmp_path)
    for name, value in (
        ("DATA_DIR", settings.data_dir),
        ("VALKEY_PORT", settings.valkey_port),
        ("KEY_PREFIX", settings.key_prefix),
        ("LOG_LEVEL", "WARNING"),
    ):
        monkeypatch.setenv(f"KENNING_{name}", str(value))


def _seed(engine: Engine) -> list[str]:
    keep = engine.memories.remember(
        Draft(
            "Deploys of shop-api go through Argo CD since March",
            project="shop",
            tags=("deploy", "argo"),
            valid_from="2025-03-01",
            title="deploys",
        ),
        actor="alice",
    ).key
    old = engine.memories.remember(
        Draft("The billing cron runs at 03:00 UTC", project="shop", event_date="2024-11-02"),
        actor="bob",
    ).key
    engine.lifecycle.transition(
        old, "archived", reason="the cron moved to the scheduler", actor="bob"
    )
    engine.experience.record_experience(
        keep,
        Report(
            effort=4,
            outcome="succeeded",
            abandoned_approaches=[Approach("sharding pytest by file", reason="session fixtures")],
        ),
        actor="alice",
    )
    return [keep, old]


def test_export_then_import_from_kenning_gives_the_same_memories(
    engine: Engine,
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _seed(engine)
    _env(monkeypatch, tmp_path, settings)
    out = tmp_path / "kenning.jsonl"
    assert main(["export", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    before = {m.key: m for m in engine.memories.list(Listing(limit=100, states=STATES)).items}
    assert len(rows) == len(before) == 2
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    assert main(["export", str(out)]) == 1  # never overwrites
    fresh = make_settings(
        settings.data_dir, settings.valkey_port, key_prefix="f" + settings.key_prefix
    )
    monkeypatch.setenv("KENNING_KEY_PREFIX", fresh.key_prefix)
    assert main(["import", "--from", "kenning", str(out), "--dry-run"]) == 0
    assert "would restore memories" in capsys.readouterr().out
    other = Engine.open(fresh, client, embedder, clock=clock)
    try:
        assert other.memories.list(Listing(limit=100, states=STATES)).total == 0
        assert main(["import", "--from", "kenning", str(out)]) == 0
        after = {m.key: m for m in other.memories.list(Listing(limit=100, states=STATES)).items}
        assert len(after) == len(before)
        for key, memory in before.items():
            twin = after[fresh.key_prefix + key[len(settings.key_prefix) :]]
            mine = {k: v for k, v in encode(memory).items() if k != "vector"}
            theirs = {k: v for k, v in encode(twin).items() if k != "vector"}
            assert theirs == {**mine, **{k: v for k, v in theirs.items() if k in ("key",)}}
        assert main(["import", "--from", "kenning", str(out), "--dry-run"]) == 0
        assert "0 add, 0 update" in capsys.readouterr().out.replace("add: 0", "0 add")
    finally:
        _wipe(client, fresh.key_prefix)
        other.close()


def test_a_plain_import_of_an_export_takes_its_readable_fields(
    engine: Engine,
    settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _seed(engine)
    _env(monkeypatch, tmp_path, settings)
    out = tmp_path / "kenning.jsonl"
    assert main(["export", str(out)]) == 0
    row = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert set(row) - {"kenning"} <= {
        "content",
        "namespace",
        "project",
        "tags",
        "title",
        "source",
        "event_date",
        "valid_from",
        "expires_at",
    }
    assert row["kenning"]["fields"]["content"] == row["content"]
    assert main(["import", str(out), "--dry-run"]) == 0  # every line a duplicate of the store


def test_a_file_that_is_not_an_export_is_refused(
    engine: Engine,
    settings: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _env(monkeypatch, tmp_path, settings)
    path = tmp_path / "plain.jsonl"
    path.write_text('{"content": "x y z"}\n', encoding="utf-8")
    assert main(["import", "--from", "kenning", str(path)]) == 1
    assert "no kenning record" in capsys.readouterr().err


def _wipe(conn: valkey.Valkey, prefix: str) -> None:
    from kenning.store import indexes

    indexes.drop(conn, prefix)
    batch = list(conn.scan_iter(match=f"{prefix}*", count=1000))
    for i in range(0, len(batch), 500):
        conn.delete(*batch[i : i + 500])
