"""`kenning mcp` with KENNING_MCP_WORKERS=2: two processes on one socket, each with its own model,
both stopped by one Ctrl-C; a stateful server is refused more than one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx

from bench.load import descendants
from bench.system import rss_mb
from kenning.core.settings import Settings
from tests.conftest import free_port, wait_for_line

ENTRY = "from kenning_cli.main import main; raise SystemExit(main(['mcp']))"
BANNER = "MCP server on http://127.0.0.1:"


def _env(settings: Settings, port: int, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    env.update(
        {
            "KENNING_DATA_DIR": str(settings.data_dir),
            "KENNING_VALKEY_PORT": str(settings.valkey_port),
            "KENNING_KEY_PREFIX": settings.key_prefix,
            "KENNING_MCP_PORT": str(port),
            "KENNING_LOG_LEVEL": "WARNING",
            # each print's text and newline are separate writes then: two workers' start-up lines
            # once ran together ("AB", then two newlines; kenning_cli.logs.announce)
            "PYTHONUNBUFFERED": "1",
            **extra,
        }
    )
    return env


def test_two_worker_processes_serve_one_port_and_stop_together(
    settings: Settings, tmp_path: Path
) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY],
        cwd=tmp_path,
        env=_env(settings, port, KENNING_MCP_WORKERS="2"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = wait_for_line(proc, "2 worker processes")
        # both workers listen, each saying so on a line of its own
        banners = [wait_for_line(proc, BANNER)[-1] for _ in range(2)]
        workers = descendants(proc.pid)
        statuses = []
        for _ in range(12):  # a new connection each: the kernel hands them to either worker
            with httpx.Client() as http:
                statuses.append(http.get(f"http://127.0.0.1:{port}/healthz").status_code)
        resident = [rss_mb(pid) for pid in workers]
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
    assert any("2 worker processes" in line for line in lines)
    assert len(workers) == 2
    assert sorted(banners) == sorted(
        f"{BANNER}{port}/mcp (worker {pid}); Ctrl-C stops it" for pid in workers
    )
    assert all(mb > 50 for mb in resident), resident  # each loaded the model itself
    assert statuses == [200] * 12
    assert code == 0
    assert all(not Path(f"/proc/{pid}").exists() for pid in workers)


def test_a_stateful_server_refuses_more_than_one_worker(settings: Settings, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", ENTRY],
        cwd=tmp_path,
        env=_env(settings, free_port(), KENNING_MCP_WORKERS="2", KENNING_MCP_STATELESS="false"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2
    assert "KENNING_MCP_WORKERS > 1 needs KENNING_MCP_STATELESS=true" in done.stderr
