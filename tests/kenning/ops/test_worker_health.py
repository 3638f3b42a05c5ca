"""`kenning health worker` forgets the runs of feeds no longer configured (issue 35, defect 4): a
failed run of a feed removed from feeds.yml (or disabled there) no longer keeps the worker
unhealthy; a failed run of a feed still configured does (the positive control)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.ops.jobs import JobRun
from kenning_cli.main import load_commands, main
from tests.conftest import NOW

load_commands()


def run(job: str, status: str) -> JobRun:
    error = "boom" if status != "ok" else None
    return JobRun(job, f"r-{job}", status, "w1", NOW, NOW + 1, error)  # type: ignore[arg-type]


def test_failed_runs_of_removed_feeds_do_not_keep_the_worker_unhealthy(
    engine: Engine,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    feeds = tmp_path / "feeds.yml"
    monkeypatch.chdir(tmp_path)
    for name, value in (
        ("DATA_DIR", settings.data_dir),
        ("VALKEY_PORT", settings.valkey_port),
        ("KEY_PREFIX", settings.key_prefix),
        ("FEEDS_FILE", feeds),
    ):
        monkeypatch.setenv(f"KENNING_{name}", str(value))
    feeds.write_text(
        "feeds:\n"
        "  - name: kept\n    url: https://example.com/kept.xml\n"
        "  - name: paused\n    url: https://example.com/paused.xml\n    enabled: false\n",
        encoding="utf-8",
    )
    for job, status in (
        ("maintenance", "ok"),
        ("feed:kept", "ok"),
        ("feed:gone", "failed"),
        ("feed:paused", "outage"),
    ):
        engine.jobs.record(run(job, status))
    assert main(["health", "worker"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok worker:")
    assert "feed:gone" not in out
    assert "feed:kept ok" in out
    engine.jobs.record(run("feed:kept", "failed"))  # the positive control: a configured feed
    assert main(["health", "worker"]) == 1
    assert "feed:kept failed" in capsys.readouterr().out
