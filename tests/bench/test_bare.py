"""The bare Starlette endpoint (the MCP comparison point of bench/mcp.py) answers
what the recall tool answers."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx
import uvicorn

from bench import bare
from bench.run import free_port
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest


@contextmanager
def _serving(engine: Engine) -> Iterator[str]:
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(bare.app(engine), host="127.0.0.1", port=port, log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    try:
        yield f"http://127.0.0.1:{port}{bare.PATH}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_the_bare_endpoint_returns_the_recall_json(engine: Engine) -> None:
    engine.memories.remember(
        Draft(
            "Deploys of billing-api go through `fly deploy` after the Drone pipeline.",
            namespace="knowledge",
            project="billing",
        ),
        actor="t",
    )
    expected = engine.recaller.recall(
        RecallRequest("how do we deploy billing-api?", projects=["billing"], top_k=3)
    )
    assert len(expected.hits) == 1  # the control: the memory is found through the engine
    with _serving(engine) as url:
        reply = httpx.post(
            url,
            json={"query": "how do we deploy billing-api?", "projects": ["billing"], "top_k": 3},
        )
    assert reply.status_code == 200
    got = reply.json()
    assert [r["key"] for r in got["results"]] == [h.memory.key for h in expected.hits]
