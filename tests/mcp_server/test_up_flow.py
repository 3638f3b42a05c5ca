"""The issue's "must show", end to end with real processes: `kenning up`, then `kenning token
create`, then an MCP client with that token remembers, recalls and forgets over HTTP; a read
token is refused on remember; no token is refused."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fastmcp import Client
from mcp import MCPError

from kenning.core.settings import Settings
from tests.conftest import free_port, wait_for_line
from tests.mcp_server.conftest import ok, refused

# the `kenning` script's own call
ENTRY = "from kenning_cli.main import main; raise SystemExit(main({}))"

Env = dict[str, str]


@pytest.fixture
def platform(tmp_path: Path) -> Iterator[Env]:
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
        [sys.executable, "-c", "from kenning_cli.main import main; raise SystemExit(main(['up']))"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        lines = wait_for_line(proc, "kenning is up")
        assert "mcp server started" in lines
        yield env
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _token(env: Env, scope: str, cwd: Path) -> str:
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from kenning_cli.main import main; raise SystemExit(main())",
            "token",
            "create",
            "--scope",
            scope,
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout.splitlines()[-1]


async def test_up_then_token_then_remember_recall_forget(platform: Env, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{platform['KENNING_MCP_PORT']}/mcp"
    write, read = _token(platform, "write", tmp_path), _token(platform, "read", tmp_path)
    async with Client(url, auth=write) as client:
        stored = await ok(
            client,
            "remember",
            {"content": "Kenning runs its MCP server under kenning up", "project": "demo"},
        )
        found = await ok(client, "recall", {"query": "what serves MCP under kenning up?"})
        assert found["results"][0]["key"] == stored["key"]
        assert (await ok(client, "forget", {"key": stored["key"], "confirm": True}))[
            "status"
        ] == "forgotten"
    async with Client(url, auth=read) as client:
        # the very query that found it first (positive control above) finds
        # nothing once it is forgotten
        assert (await ok(client, "recall", {"query": "what serves MCP under kenning up?"}))[
            "results"
        ] == []
        assert (await refused(client, "remember", {"content": "not allowed"})).startswith(
            "permission_denied"
        )
    with pytest.raises(MCPError):
        async with Client(url) as client:
            await client.list_tools()


async def test_kenning_mcp_runs_the_server_alone(settings: Settings, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    port = free_port()
    env.update(
        {
            "KENNING_DATA_DIR": str(settings.data_dir),
            "KENNING_VALKEY_PORT": str(settings.valkey_port),
            "KENNING_KEY_PREFIX": settings.key_prefix,
            "KENNING_MCP_PORT": str(port),
            "KENNING_LOG_LEVEL": "WARNING",
        }
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", ENTRY.format("['mcp']")],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        wait_for_line(proc, "MCP server on")
        async with httpx.AsyncClient() as http:
            health = await http.get(f"http://127.0.0.1:{port}/healthz")
            metrics = await http.get(f"http://127.0.0.1:{port}/metrics")
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=60)
    assert health.status_code == 200
    assert health.json()["status"] == "ok"
    count = "kenning_embedding_latency_seconds_count"
    embeddings = [line for line in metrics.text.splitlines() if line.startswith(count)]
    # the health probe embedded through the timed embedder
    assert float(embeddings[0].split()[-1]) >= 1.0
    assert code == 0
