"""Latency through the MCP server over Streamable HTTP: a real fastmcp client on loopback, bearer
auth on, in front of the run's store, with the server placed two ways and
the same calls made to each:

- ``recall`` / ``remember`` (the headline): the server in a process of its own (``kenning mcp``
  against the bench's private Valkey, loading the same model), as a remote agent
  sees it, minus the network;
- ``same_process``: uvicorn in a thread of the bench process. Client and server share one GIL, so
  the client's own work is charged to the server: an upper bound, kept to compare with earlier runs.

Beside the separate MCP server runs the floor of the transport: ``bench.bare``, a Starlette JSON
endpoint doing the same engine call in a process of its own. Each query is recalled through the
engine, then -- in an order that rotates per query -- through MCP three ways (a bare JSON-RPC POST
from the httpx client that also calls the bare endpoint: the server's own cost; the official SDK's
``ClientSession``; fastmcp's ``Client``) and through the bare endpoint; ``recall_paired`` holds the
differences per query, and ``hits_differ`` how many answers did not hold the engine call's hits
(``bench.clients`` checks that each is a recall result).
"""

from __future__ import annotations

import random
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AsyncExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx

from bench import clients, families, metrics, system
from bench.corpus import filler, slots
from bench.families import Query
from kenning.core.settings import Settings
from kenning.memory.recall import RecallRequest

if TYPE_CHECKING:
    from bench.run import Run

WARMUP = 5
START_TIMEOUT = 180.0  # the server process loads the model before it listens
STOP_TIMEOUT = 20.0

Probe = tuple[str, str | None]  # a remember: content, project


def measure(run: Run, settings: Settings, n: int) -> dict[str, Any]:
    try:
        import fastmcp  # noqa: F401  (both placements need the client and the server)

        import mcp_server.service  # noqa: F401
    except ImportError as exc:
        return {"not_measured": f"the MCP server is not importable: {exc}"}
    rng = random.Random(f"mcp:{run.config.seed}")
    queries = families.paraphrase_queries(run.corpus, rng, n + WARMUP)
    texts = [(filler(rng, slots(rng, q.project or "x-y")), q.project) for q in queries]
    _, secret = run.engine.tokens.create("bench-mcp", "write", actor="bench")

    # new text per placement: a repeat would be a duplicate
    def writes(placement: str) -> list[Probe]:
        return [
            (f"{text} (mcp probe {placement} {i})", project)
            for i, (text, project) in enumerate(texts)
        ]

    result: dict[str, Any] = {"server": "separate process (kenning mcp)"}

    # the same recall through the engine, just before the MCP ones
    def direct(query: Query) -> list[str]:
        request = RecallRequest(
            query.text, projects=[query.project] if query.project else None, top_k=10, actor="bench"
        )
        return [hit.memory.key for hit in run.engine.recaller.recall(request).hits]

    try:
        with separate_server(settings) as url, bare_server(settings) as bare:
            result.update(
                anyio.run(timed_calls, url, secret, queries, writes("separate"), direct, bare)
            )
    except (OSError, RuntimeError, subprocess.SubprocessError) as exc:
        result["not_measured"] = f"the server process did not serve: {exc}"
    result["same_process"] = same_process(run, settings, secret, queries, writes("same"))
    return result


async def timed_calls(
    url: str,
    secret: str,
    queries: list[Query],
    writes: list[Probe],
    direct: Callable[[Query], list[str]] | None = None,
    bare: str | None = None,
) -> dict[str, Any]:
    """One recall then one remember per query through fastmcp's ``Client``, each timed from the
    client; the first WARMUP are not kept.

    With ``direct`` (the same recall through the engine, returning its hits' keys), each query is
    first recalled by the engine, then -- the order rotated per query -- through MCP three ways:
    fastmcp's ``Client``, the official SDK's ``ClientSession``, and a bare JSON-RPC POST from the
    same httpx client that calls ``bare`` (the URL of ``bench.bare``, also called when given).
    ``recall_paired`` holds the differences per query: what MCP over HTTP adds, measured at the same
    moment, so the box's drift does not land on the clients. Every answer must be a recall result;
    ``hits_differ`` counts those whose hits are not the engine call's.
    """
    from fastmcp import Client

    times: dict[str, list[float]] = {"recall": [], "remember": []}
    differ: dict[str, int] = {}
    async with AsyncExitStack() as stack:
        client = await stack.enter_async_context(Client(url, auth=secret))
        targets = {"recall": clients.through(client)}
        if direct is not None:
            targets.update(await _peers(stack, url, secret, bare))
        differ = dict.fromkeys(targets, 0)
        for index, (query, (text, project)) in enumerate(zip(queries, writes, strict=True)):
            arguments = {"query": query.text, "projects": [query.project], "top_k": 10}
            took, wrong = await _recalls(targets, arguments, index, query, direct)
            for name in wrong:
                differ[name] += 1
            # after every recall: a new memory must not change the next one's hits
            start = time.perf_counter()
            await client.call_tool(
                "remember", {"content": text, "namespace": "episodic", "project": project}
            )
            took["remember"] = time.perf_counter() - start
            if index >= WARMUP:
                for name, seconds in took.items():
                    times.setdefault(name, []).append(seconds)
    out = _summaries(times)
    if direct is not None:
        out["recall_paired"]["hits_differ"] = {"queries": len(queries), **differ}
    return out


async def _peers(
    stack: AsyncExitStack, url: str, secret: str, bare: str | None
) -> dict[str, clients.Target]:
    """The other ways to the same recall: the SDK's ClientSession, a bare POST, the bare endpoint
    (one httpx client for both, so the POST and the endpoint pay the same client's cost)."""
    http = await stack.enter_async_context(
        httpx.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=30)
    )
    targets: dict[str, clients.Target] = {
        "sdk": clients.through(await clients.sdk_session(stack, url, secret)),
        "bare_post": lambda args, i: clients.raw_call(http, url, args, i, clients.MODERN),
    }
    if bare is not None:
        targets["bare"] = lambda args, _: clients.floor_call(http, bare, args)
    return targets


async def _recalls(
    targets: dict[str, clients.Target],
    arguments: dict[str, Any],
    index: int,
    query: Query,
    direct: Callable[[Query], list[str]] | None,
) -> tuple[dict[str, float], list[str]]:
    """The engine's recall (with ``direct``), then every target's; seconds each,
    targets whose hits differ."""
    if direct is None:
        return await clients.call_all(targets, arguments, index, None)
    start = time.perf_counter()
    expected = direct(query)
    took = time.perf_counter() - start
    timings, wrong = await clients.call_all(targets, arguments, index, expected)
    return {"engine": took, **timings}, wrong


def _summaries(times: dict[str, list[float]]) -> dict[str, Any]:
    """The MCP latencies, and the per-query differences to the engine and the
    bare endpoint when measured."""
    out: dict[str, Any] = {
        "recall": metrics.latency_summary(times["recall"]),
        "remember": metrics.latency_summary(times["remember"]),
    }
    if "engine" not in times:
        return out
    engine = times["engine"]

    def minus(name: str, base: list[float]) -> dict[str, Any]:
        return metrics.latency_summary([v - b for v, b in zip(times[name], base, strict=True)])

    paired_: dict[str, Any] = {
        "engine": metrics.latency_summary(engine),
        "added_by_mcp": minus("recall", engine),
        "added_by_mcp_sdk": minus("sdk", engine),
        "added_by_mcp_bare_post": minus("bare_post", engine),
    }
    if "bare" in times:
        bare = times["bare"]
        paired_.update(
            {
                "bare_endpoint": metrics.latency_summary(bare),
                "added_by_bare_endpoint": minus("bare", engine),
                "mcp_minus_bare_endpoint": minus("recall", bare),
                "mcp_sdk_minus_bare_endpoint": minus("sdk", bare),
                "mcp_bare_post_minus_bare_endpoint": minus("bare_post", bare),
            }
        )
    out["recall_paired"] = paired_
    return out


def same_process(
    run: Run, settings: Settings, secret: str, queries: list[Query], writes: list[Probe]
) -> dict[str, Any]:
    from bench.run import free_port
    from mcp_server.service import McpService

    served = settings.model_copy(
        update={"mcp_port": free_port(), "mcp_host": "127.0.0.1", "mcp_auth": True}
    )
    service = McpService(run.engine, served)
    service.start()
    try:
        result: dict[str, Any] = anyio.run(timed_calls, service.url, secret, queries, writes)
    finally:
        service.stop()
    return result


@contextmanager
def separate_server(settings: Settings) -> Iterator[str]:
    """``kenning mcp`` in a child process on the bench's Valkey and data dir;
    yields its URL once it listens."""
    with child_server(settings, ["kenning_cli", "mcp"], "mcp-server") as port:
        yield f"http://127.0.0.1:{port}/mcp"


@contextmanager
def bare_server(settings: Settings) -> Iterator[str]:
    """``bench.bare`` (the bare Starlette endpoint) in a child process like
    ``separate_server``; yields its URL."""
    from bench import bare

    with child_server(settings, ["bench.bare"], "bare-server", with_port=True) as port:
        yield f"http://127.0.0.1:{port}{bare.PATH}"


@contextmanager
def child_server(
    settings: Settings, module: list[str], name: str, *, with_port: bool = False
) -> Iterator[int]:
    """``python -m <module>`` in a child process on the bench's Valkey; yields
    its port once it listens."""
    from bench.run import free_port

    port = free_port()
    log_path = settings.data_dir / f"{name}.log"
    argv = [sys.executable, "-m", *module, *([str(port)] if with_port else [])]
    with log_path.open("w", encoding="utf-8") as log:
        child = subprocess.Popen(
            argv,
            env=server_env(settings, port),
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=system.ROOT,
        )
        try:
            wait_listening(child, port, log_path, label=" ".join(module))
            yield port
        finally:
            child.terminate()
            try:
                child.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def server_env(settings: Settings, port: int) -> dict[str, str]:
    return system.child_env(
        settings,
        KENNING_MCP_HOST="127.0.0.1",
        KENNING_MCP_PORT=str(port),
        KENNING_MCP_AUTH="true",
        KENNING_LOG_LEVEL="WARNING",
    )


def wait_listening(
    child: subprocess.Popen[bytes], port: int, log_path: Path, label: str = "kenning mcp"
) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if child.poll() is not None:
            tail = log_path.read_text(encoding="utf-8", errors="replace").strip()[-300:]
            raise RuntimeError(f"`{label}` exited with {child.returncode}: {tail}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"`{label}` did not listen on port {port} within {START_TIMEOUT:.0f} s")
