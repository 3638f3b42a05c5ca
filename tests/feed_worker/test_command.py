"""`kenning worker`: its help, and a real child process that runs maintenance
on schedule until Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from feed_worker.jobs import MAINTENANCE, Job
from feed_worker.worker import Worker
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.ops.jobs import JobRun
from kenning_cli.main import build_parser, load_commands, main
from tests.feed_worker.conftest import eventually

# the `kenning` script's own call
ENTRY = "from kenning_cli.main import main; raise SystemExit(main({}))"

load_commands()


def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Settings) -> None:
    monkeypatch.chdir(tmp_path)  # no developer .env leaks in
    for name, value in (
        ("DATA_DIR", settings.data_dir),
        ("VALKEY_PORT", settings.valkey_port),
        ("KEY_PREFIX", settings.key_prefix),
    ):
        monkeypatch.setenv(f"KENNING_{name}", str(value))


def test_worker_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        build_parser().parse_args(["worker", "--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    assert "usage: kenning worker" in out
    assert "leader lock" in " ".join(out.split())  # argparse wraps the description


def test_up_has_a_no_worker_flag() -> None:
    assert build_parser().parse_args(["up", "--no-worker"]).no_worker is True
    assert build_parser().parse_args(["up"]).no_worker is False


def test_kenning_worker_runs_maintenance_in_the_foreground_until_ctrl_c(
    engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    env.update(
        {
            "KENNING_DATA_DIR": str(settings.data_dir),
            "KENNING_VALKEY_PORT": str(settings.valkey_port),
            "KENNING_KEY_PREFIX": settings.key_prefix,
            "KENNING_MAINTENANCE_INTERVAL_MINUTES": "0.005",
            "KENNING_LOG_LEVEL": "WARNING",
        }
    )
    assert engine.jobs.last_runs() == {}  # positive control: nothing has run on this store yet
    # not `python -m kenning_cli.main`: run as __main__, the CLI module would not see the commands
    # registered on the imported kenning_cli.main (the `kenning` script, and this,
    # call the real module's main)
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY.format("['worker']")],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        runs = eventually(
            engine.jobs.last_runs, lambda runs: MAINTENANCE in runs or proc.poll() is not None
        )
        assert proc.poll() is None, proc.communicate()[0]
        run: JobRun = runs[MAINTENANCE]
        assert run.status == "ok"
        assert engine.jobs.leader() == run.worker  # the child holds the lease while it runs
        proc.send_signal(signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, out
    assert f"worker {run.worker} running: maintenance every 0.3 s" in out
    assert engine.jobs.leader() is None  # Ctrl-C released the lease


def test_doctor_shows_the_leader_and_fails_when_the_last_run_failed(
    engine: Engine,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _env(monkeypatch, tmp_path, settings)

    def broken() -> dict[str, object]:
        raise RuntimeError("the index is on fire")

    worker = Worker(engine, settings, worker="w1")
    assert worker.run_now(MAINTENANCE).status == "ok"
    assert (
        main(["doctor", "--no-mcp", "--no-web"]) == 0
    )  # positive control: a good run and a held lease pass
    assert "ok   worker: leader w1; maintenance ok at " in capsys.readouterr().out
    failing = Worker(engine, settings, worker="w1", jobs=[Job(MAINTENANCE, broken, 60.0)])
    assert failing.run_now(MAINTENANCE).status == "failed"
    assert main(["doctor", "--no-mcp", "--no-web"]) == 1
    out = capsys.readouterr().out
    assert "FAIL worker: leader w1; maintenance failed at " in out
    assert out.rstrip().endswith(": RuntimeError: the index is on fire")
    worker.stop()
