"""Latency through the MCP server over Streamable HTTP: the real server (uvicorn in a thread, bearer auth
on) in front of the run's engine, and a real fastmcp client on loopback.

Client and server share this process (and its GIL), so the numbers are an upper bound of what a remote
client sees minus the network.
"""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Any

import anyio

from bench import families, metrics
from bench.corpus import filler, slots
from kenning.settings import Settings

if TYPE_CHECKING:
    from bench.runner import Run

WARMUP = 5


def measure(run: Run, settings: Settings, n: int) -> dict[str, Any]:
    try:
        from fastmcp import Client

        from mcp_server.service import McpService
    except ImportError as exc:
        return {"not_measured": f"the MCP server is not importable: {exc}"}
    from bench.runner import free_port

    rng = random.Random(f"mcp:{run.config.seed}")
    queries = families.paraphrase_queries(run.corpus, rng, n + WARMUP)
    writes = [(filler(rng, slots(rng, q.project or "x-y")) + f" (mcp probe {i})", q.project) for i, q in
              enumerate(queries)]
    served = settings.model_copy(update={"mcp_port": free_port(), "mcp_host": "127.0.0.1", "mcp_auth": True})
    _, secret = run.engine.tokens.create("bench-mcp", "write", actor="bench")
    service = McpService(run.engine, served)
    service.start()
    try:
        async def calls() -> dict[str, Any]:
            recall: list[float] = []
            remember: list[float] = []
            async with Client(service.url, auth=secret) as client:
                for index, (query, (text, project)) in enumerate(zip(queries, writes, strict=True)):
                    start = time.perf_counter()
                    await client.call_tool("recall", {"query": query.text, "projects": [query.project],
                                                      "top_k": 10})
                    middle = time.perf_counter()
                    await client.call_tool("remember", {"content": text, "namespace": "episodic",
                                                        "project": project})
                    if index >= WARMUP:
                        recall.append(middle - start)
                        remember.append(time.perf_counter() - middle)
            return {"recall": metrics.latency_summary(recall), "remember": metrics.latency_summary(remember)}

        result: dict[str, Any] = anyio.run(calls)
    finally:
        service.stop()
    return result
