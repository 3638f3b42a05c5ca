"""`kenning web` runs the dashboard alone against a running Valkey, and Ctrl-C stops it cleanly."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from kenning.core.settings import Settings
from tests.conftest import free_port, wait_for_line

# the `kenning` script's own call
ENTRY = "from kenning_cli.main import main; raise SystemExit(main(['web']))"


def test_kenning_web_runs_the_dashboard_alone(settings: Settings, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    port = free_port()
    env.update(
        {
            "KENNING_DATA_DIR": str(settings.data_dir),
            "KENNING_VALKEY_PORT": str(settings.valkey_port),
            "KENNING_KEY_PREFIX": settings.key_prefix,
            "KENNING_WEB_PORT": str(port),
            "KENNING_LOG_LEVEL": "WARNING",
        }
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = wait_for_line(proc, "dashboard on")
        health = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=60)
        home = httpx.get(f"http://127.0.0.1:{port}/", timeout=30)
        login = httpx.get(f"http://127.0.0.1:{port}/login", timeout=30)
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
    assert f"dashboard on http://127.0.0.1:{port}/; Ctrl-C stops it" in lines
    assert health.status_code == 200
    assert health.json()["status"] == "ok"
    assert home.status_code == 303
    assert home.headers["location"] == "/login?next=/"
    assert 'name="password"' in login.text
    assert code == 0
