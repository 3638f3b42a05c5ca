"""`kenning up` end to end: a real child process brings the platform up; doctor
passes; Ctrl-C stops all."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import free_port, wait_for_line


@pytest.fixture
def up_process(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], dict[str, str]]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    env.update(
        {
            "KENNING_DATA_DIR": str(tmp_path / "data"),
            "KENNING_VALKEY_PORT": str(free_port()),
            "KENNING_MCP_PORT": str(free_port()),
            "KENNING_WEB_PORT": str(free_port()),
            "KENNING_LOG_LEVEL": "WARNING",
        }
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "kenning_cli.main", "up"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    yield proc, env
    if proc.poll() is None:
        proc.kill()
        proc.wait()


def test_up_serves_then_doctor_passes_then_ctrl_c_stops_everything(
    up_process: tuple[subprocess.Popen[str], dict[str, str]], tmp_path: Path
) -> None:
    proc, env = up_process
    lines = wait_for_line(proc, "kenning is up")
    assert any(line.startswith("valkey ready on 127.0.0.1:") for line in lines)
    assert "worker started" in lines  # the scheduled maintenance runs beside the MCP server
    doctor = subprocess.run(
        [sys.executable, "-m", "kenning_cli.main", "doctor"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert doctor.returncode == 0, doctor.stdout + doctor.stderr
    assert re.search(
        r"ok   indexes: \S+idx:memories:\w+ current, \d+ memories indexed", doctor.stdout
    )
    assert "ok   worker: leader " in doctor.stdout  # the worker of `up` holds the lock
    assert "ok   mcp server: http://127.0.0.1:" in doctor.stdout
    assert "ok   mcp auth: tokens required" in doctor.stdout  # no --token: the server asks for one
    web = f"http://127.0.0.1:{env['KENNING_WEB_PORT']}/healthz"
    assert f"ok   dashboard: {web} answered 200" in doctor.stdout
    created = subprocess.run(
        [
            sys.executable,
            "-m",
            "kenning_cli.main",
            "token",
            "create",
            "--scope",
            "read",
            "--name",
            "doctor",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    secret = created.stdout.strip().splitlines()[-1]
    # the wrong token's 401 at INFO: no httpx request lines; at DEBUG they show (positive control)
    verdicts = {
        secret: ("ok   mcp auth: the token was accepted", "DEBUG", True),
        "wrong": ("FAIL mcp auth: /mcp answered 401", "INFO", False),
    }
    for token, (verdict, level, requests_logged) in verdicts.items():
        again = subprocess.run(
            [sys.executable, "-m", "kenning_cli.main", "doctor", "--token", token],
            cwd=tmp_path,
            env={**env, "KENNING_LOG_LEVEL": level},
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert verdict in again.stdout, again.stdout + again.stderr
        assert ("HTTP Request:" in again.stderr) is requests_logged, again.stderr
    assert "mcp server started" in lines
    base = f"http://127.0.0.1:{env['KENNING_MCP_PORT']}"
    assert httpx.get(f"{base}/healthz", timeout=60).status_code == 200  # the probe embeds once
    metrics = httpx.get(f"{base}/metrics", timeout=30).text
    count = next(
        line
        for line in metrics.splitlines()
        if line.startswith("kenning_embedding_latency_seconds_count")
    )
    # `up` wraps its one model so /metrics sees embedding latency
    assert float(count.split()[-1]) >= 1.0
    assert "dashboard started" in lines
    dashboard = f"http://127.0.0.1:{env['KENNING_WEB_PORT']}"
    assert httpx.get(f"{dashboard}/healthz", timeout=60).status_code == 200
    # not without a login
    assert httpx.get(f"{dashboard}/", timeout=30).headers["location"].startswith("/login")
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 0
    pid_file = tmp_path / "data" / "valkey" / "valkey.pid"
    assert not pid_file.exists()  # valkey-server removed its pid file on a clean shutdown
