"""Measure what abandoned MCP sessions cost: RSS of a server process before and after N `initialize`
requests that never close their session, and after the idle timeout (docs/reliability.md).

    PYTHONPATH=. python -m bench.probes.abandoned_sessions --sessions 2000 --idle 5

Runs the real server (embedded Valkey in a temp dir, the configured model) in this process, as
`kenning up` does. Phases "capped" and "uncapped" keep sessions (KENNING_MCP_STATELESS=false):
"capped"
uses the default per-token cap; "uncapped" lifts it to show the idle timeout alone freeing the
sessions.
Phase "stateless" is the default transport, which opens no session at all.
"""

from __future__ import annotations

import argparse
import gc
import socket
import tempfile
import time
from pathlib import Path

import httpx

from kenning.core.clock import SystemClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import load_embedder
from kenning.store import connect
from mcp_server.service import McpService

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "abandoner", "version": "1"},
    },
}


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def phase(
    name: str,
    engine: Engine,
    base: Settings,
    sessions: int,
    idle: float,
    cap: int,
    stateless: bool = False,
) -> None:
    settings = base.model_copy(
        update={
            "mcp_port": free_port(),
            "mcp_session_idle_seconds": idle,
            "mcp_sessions_per_token": cap,
            "mcp_stateless": stateless,
        }
    )
    _, secret = engine.tokens.create(f"abandoner-{name}", "write", actor="script")
    service = McpService(engine, settings)
    service.start()
    headers = {"authorization": f"Bearer {secret}", "accept": "application/json, text/event-stream"}
    try:
        gc.collect()
        before = rss_mb()
        codes: dict[int, int] = {}
        with httpx.Client(timeout=30) as http:
            for _ in range(sessions):
                status = http.post(service.url, json=INITIALIZE, headers=headers).status_code
                codes[status] = codes.get(status, 0) + 1
        gc.collect()
        opened = rss_mb()
        time.sleep(idle + 3)
        gc.collect()
        after = rss_mb()
    finally:
        service.stop()
    print(
        f"{name}: cap {cap}, idle {idle:g}s, {sessions} initialize -> {codes}; "
        f"RSS {before:.0f} MB before, {opened:.0f} MB with them open (+{opened - before:.0f}), "
        f"{after:.0f} MB after the idle timeout"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=2000)
    parser.add_argument("--idle", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Settings(
            _env_file=None, data_dir=Path(tmp), valkey_port=free_port(), key_prefix="measure:"
        )
        with EmbeddedValkey(base):
            engine = Engine.open(base, connect(base), load_embedder(base), clock=SystemClock())
            phase("uncapped", engine, base, args.sessions, args.idle, cap=10_000)
            phase("capped", engine, base, args.sessions, args.idle, cap=base.mcp_sessions_per_token)
            phase(
                "stateless",
                engine,
                base,
                args.sessions,
                args.idle,
                cap=base.mcp_sessions_per_token,
                stateless=True,
            )


if __name__ == "__main__":
    main()
