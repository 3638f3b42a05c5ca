"""Server and Valkey CPU per call, per tool (issue 38): ``python -m bench.tool_cpu``.

One client sends each tool of the load mix (``bench.load.TOOLS``) back to back against ``kenning
mcp`` over HTTP (bare JSON-RPC POSTs, as ``bench.load`` sends them), over 1,000 corpus memories,
in rounds; per tool and round: the server's and Valkey's CPU milliseconds per call (``/proc``) and
the wall time per call. Beside it, in this process: the query embedding alone and the engine's
recall of the same queries (no HTTP, no MCP), so what the door adds is the difference, and after
the HTTP rounds the engine's remember of new texts (three rounds).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from bench import families, load
from bench.corpus import filler, generate, slots
from bench.run import free_port
from kenning.core.settings import load_settings
from kenning.memory.bulk import Bulk
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import load_embedder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.tool_cpu", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--calls", type=int, default=50, help="calls per tool and round")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    from kenning_cli.services import open_engine

    corpus = generate("10k", 7)
    items = corpus.items[:1000]
    rng = random.Random(1)
    with tempfile.TemporaryDirectory(prefix="kenning-tool-cpu-") as tmp:
        settings = load_settings().model_copy(
            update={
                "data_dir": Path(tmp),
                "valkey_port": free_port(),
                "key_prefix": "bench:",
                "valkey_url": None,
            }
        )
        with EmbeddedValkey(settings) as valkey_server:
            embedder = load_embedder(settings)
            engine = open_engine(settings, embedder)
            drafts = [Draft(i.content, namespace=i.namespace, project=i.project) for i in items]
            Bulk(engine.ctx, engine.memories).remember_many(drafts, actor="bench")
            projects = sorted({i.project for i in items if i.project})
            workload = load.Workload(
                queries=[
                    (q.text, q.project if q.project in projects else None)
                    for q in families.paraphrase_queries(corpus, rng, 400)
                ],
                writes=[(filler(rng, slots(rng, p)), p) for p in projects for _ in range(4)],
                projects=projects,
            )
            in_process(engine, embedder, workload.queries[:150])
            secret = engine.tokens.create("tool-cpu", "write", actor="bench")[1]
            assert valkey_server.process is not None
            valkey_pid = valkey_server.process.pid
            with load.server(settings, {}, "tool-cpu") as (url, pids):
                asyncio.run(
                    over_http(url, secret, workload, pids, valkey_pid, args.calls, args.rounds)
                )
            in_process_writes(engine, workload.writes[:60])  # after: the HTTP part's store as was
            engine.close()
    return 0


def in_process(engine: Any, embedder: Any, queries: list[tuple[str, str | None]]) -> None:
    """CPU per call of the embedding alone and of the engine's recall, same queries."""
    for _ in range(2):
        start = time.process_time()
        for text, _ in queries:
            embedder.embed(text)
        embedded = time.process_time()
        for text, project in queries:
            request = RecallRequest(text, projects=[project] if project else None, top_k=10)
            engine.recaller.recall(request)
        done = time.process_time()
        n = len(queries)
        print(
            f"in process: embedding alone {1000 * (embedded - start) / n:.2f} ms CPU, "
            f"engine recall {1000 * (done - embedded) / n:.2f} ms CPU per call",
            flush=True,
        )


def in_process_writes(engine: Any, writes: list[tuple[str, str | None]]) -> None:
    """CPU per call of the engine's remember (embedding, duplicate and contradiction checks,
    write), each round's texts new."""
    for round_ in range(3):
        start = time.process_time()
        for i, (text, project) in enumerate(writes):
            draft = Draft(f"{text} (note {round_}.{i})", namespace="episodic", project=project)
            engine.memories.remember(draft, actor="bench")
        cpu = 1000 * (time.process_time() - start) / len(writes)
        print(f"in process: engine remember {cpu:.2f} ms CPU per call", flush=True)


async def over_http(
    url: str,
    secret: str,
    workload: load.Workload,
    pids: Callable[[], list[int]],
    valkey_pid: int,
    calls: int,
    rounds: int,
) -> None:
    rng = random.Random(2)
    headers = {"Authorization": f"Bearer {secret}", **load.PROFILE}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        for i in range(20):  # warm-up: the token's first verification, the first searches
            arguments, _ = workload.arguments("recall", rng)
            await load.call_tool(http, url, "recall", arguments, i)
        for round_ in range(rounds):
            for tool in load.TOOLS:
                server, valkey = load.cpu_seconds(pids()), load.cpu_seconds([valkey_pid])
                start, errors = time.perf_counter(), 0
                for i in range(calls):
                    arguments, _ = workload.arguments(tool, rng)
                    errors += (await load.call_tool(http, url, tool, arguments, i)) is not None
                server = (load.cpu_seconds(pids()) - server) * 1000 / calls
                valkey = (load.cpu_seconds([valkey_pid]) - valkey) * 1000 / calls
                wall = (time.perf_counter() - start) * 1000 / calls
                print(
                    f"round {round_} {tool:13s} server {server:6.2f} ms CPU, Valkey {valkey:5.2f}"
                    f" ms CPU, wall {wall:6.1f} ms per call, errors {errors}",
                    flush=True,
                )


if __name__ == "__main__":
    sys.exit(main())
