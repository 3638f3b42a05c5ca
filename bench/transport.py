"""What MCP over HTTP adds to a recall, against its floor, in one run: ``python -m bench.transport``.

A private Valkey with N memories of the bench corpus; then, each in a process of its own on the same store,
the bare Starlette floor (``bench.floor_server``) and ``kenning mcp`` once per transport mode. For every query,
in turn: the engine call in this process, the floor over HTTP, and each MCP server through a kept-open fastmcp
``Client``, the official SDK's ``ClientSession`` and bare JSON-RPC POSTs (the server's cost without a client
library). Every number is paired per query, so the box's drift does not land on one side, and the order of
the HTTP targets rotates from query to query, so none always runs right after the in-process engine call.

``--profile DIR`` runs each server under ``py-spy record`` (raw collapsed stacks in DIR) and prints, per
process, the CPU per call spent in each layer (``bench.stacks``).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY

from bench import families, mcp, metrics, stacks, system
from bench.corpus import generate
from bench.families import Query
from bench.runner import ACTOR, free_port
from kenning.bulk import Bulk
from kenning.embedded import EmbeddedValkey
from kenning.engine import Engine
from kenning.memory import Draft
from kenning.recall import RecallRequest
from kenning.settings import Settings

TOP_K = 10
RESULTS = system.ROOT / "bench" / "results" / "transport"  # beside the bench runs, not on their page
# transport modes: the environment of `kenning mcp` in each
MODES: dict[str, dict[str, str]] = {
    f"{state}_{framing}": {"KENNING_MCP_STATELESS": str(state == "stateless").lower(),
                           "KENNING_MCP_JSON_RESPONSE": str(framing == "json").lower()}
    for state in ("stateful", "stateless") for framing in ("sse", "json")}
RAW_MODE = "stateless_json"  # the mode also called with bare JSON-RPC POSTs (the server's cost alone)
MODERN = "2026-07-28"  # the per-request protocol fastmcp's Client speaks
HANDSHAKE = "2025-11-25"  # the initialize-handshake protocol of the official SDK's ClientSession


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.transport", description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000, help="memories in the store (default 10000)")
    parser.add_argument("--calls", type=int, default=500, help="recalls per target (default 500)")
    parser.add_argument("--profile", type=Path, help="run the servers under py-spy; raw stacks in this folder")
    parser.add_argument("--modes", default=",".join(MODES), help=f"transport modes, comma-separated (default "
                        f"{','.join(MODES)}; {RAW_MODE} is always one)")
    args = parser.parse_args(argv)
    modes = list(dict.fromkeys([*args.modes.split(","), RAW_MODE]))
    if unknown := [m for m in modes if m not in MODES]:
        parser.error(f"unknown mode(s) {', '.join(unknown)}: choose from {', '.join(MODES)}")
    cpu = system.cpu_times()
    result = run(args.memories, args.calls, args.profile, modes)
    result["cpu_steal_percent"] = system.steal_percent(cpu, system.cpu_times())
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    result["machine"] = system.machine()
    print(render(result))
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{result['memories']}.json"
    path.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return 0


def run(memories: int, calls: int, profile: Path | None, modes: list[str]) -> dict[str, Any]:
    corpus = generate("10k" if memories <= 10_000 else "100k", 7)
    with tempfile.TemporaryDirectory(prefix="kenning-transport-") as tmp:
        settings = Settings(data_dir=Path(tmp), valkey_port=free_port(), key_prefix="bench:", valkey_url=None)
        with EmbeddedValkey(settings):
            from kenning_cli.services import open_engine

            engine = open_engine(settings)
            items = corpus.items[:memories]
            Bulk(engine.ctx, engine.memories).remember_many(
                [Draft(i.content, namespace=i.namespace, project=i.project, tags=i.tags, kind=i.kind)
                 for i in items], actor=ACTOR)
            _, secret = engine.tokens.create("bench-transport", "read", actor=ACTOR)
            queries = families.paraphrase_queries(corpus, random.Random("transport"), calls + mcp.WARMUP)
            with ExitStack() as stack:
                urls = {name: stack.enter_context(server(settings, env, profile, name)) for name, env in
                        [("floor", {}), *((f"mcp_{m}", MODES[m]) for m in modes)]}
                samples = anyio.run(paired, engine, urls, secret, queries)
            out: dict[str, Any] = {"memories": len(items), "calls": calls, "targets": summarise(samples)}
    if profile is not None:
        out["profile"] = {name: stacks.breakdown(profile / f"{name}.txt", served(name) * (calls + mcp.WARMUP))
                          for name in urls}
    return out


def served(name: str) -> int:
    """Recalls each server answers per query: the floor one; an MCP server one per client, the bare POSTs too."""
    if name == "floor":
        return 1
    return 2 + (2 if name == f"mcp_{RAW_MODE}" else 0)


@contextmanager
def server(settings: Settings, env: dict[str, str], profile: Path | None, name: str) -> Iterator[str]:
    """The floor (``name == "floor"``) or ``kenning mcp`` in a child process; yields its URL once it listens."""
    port = free_port()
    module = "bench.floor_server" if name == "floor" else "kenning_cli"
    command = [sys.executable, "-m", module, *([] if name == "floor" else ["mcp"])]
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
        spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        command = [spy, "record", "--format", "raw", "--rate", str(stacks.RATE), "--nonblocking",
                   "-o", str(profile / f"{name}.txt"), "--", *command]
    log_path = settings.data_dir / f"{name}.log"
    with log_path.open("w", encoding="utf-8") as log:
        child = subprocess.Popen(command, env={**mcp.server_env(settings, port), **env,
                                               "PYTHONPATH": os.pathsep.join(
                                                   [str(system.ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])},
                                 stdout=log, stderr=subprocess.STDOUT)
        try:
            mcp.wait_listening(child, port, log_path)
            yield f"http://127.0.0.1:{port}" + ("/recall" if name == "floor" else "/mcp")
        finally:
            child.send_signal(2)  # SIGINT: py-spy writes its stacks when the child ends
            try:
                child.wait(timeout=mcp.STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


async def paired(engine: Engine, urls: dict[str, str], secret: str,
                 queries: list[Query]) -> dict[str, list[float]]:
    """Per query, one call to each target in turn; seconds per target, the first WARMUP dropped."""
    samples: dict[str, list[float]] = {}
    async with AsyncExitStack() as stack:
        targets = await connect(stack, urls, secret)
        for index, query in enumerate(queries):
            args = {"query": query.text, "projects": [query.project], "top_k": TOP_K}
            ask = RecallRequest(query.text, projects=[query.project] if query.project else None, top_k=TOP_K,
                                actor=ACTOR)
            timings = {"engine": timed_sync(functools.partial(engine.recaller.recall, ask))}
            order = list(targets.items())
            for name, call in order[index % len(order):] + order[:index % len(order)]:  # no target always first
                timings[name] = await timed(call, args, index)
            if index >= mcp.WARMUP:
                for name, seconds in timings.items():
                    samples.setdefault(name, []).append(seconds)
    return samples


Target = Callable[[dict[str, Any], int], Awaitable[None]]


async def connect(stack: AsyncExitStack, urls: dict[str, str], secret: str) -> dict[str, Target]:
    """Every target, connected once: the floor, each server through both clients, and the bare POSTs."""
    from fastmcp import Client
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    auth = {"Authorization": f"Bearer {secret}"}
    http = await stack.enter_async_context(httpx.AsyncClient(headers=auth, timeout=30))
    targets: dict[str, Target] = {"floor": lambda args, _: checked(http.post(urls["floor"], json=args))}
    for mode in (name.removeprefix("mcp_") for name in urls if name.startswith("mcp_")):
        url = urls[f"mcp_{mode}"]
        fast = await stack.enter_async_context(Client(url, auth=secret))
        sdk_http = await stack.enter_async_context(httpx2.AsyncClient(headers=auth, timeout=30))
        read, write = await stack.enter_async_context(streamable_http_client(url, http_client=sdk_http))
        session = await stack.enter_async_context(ClientSession(read, write))
        await session.initialize()
        targets[f"{mode} fastmcp Client"] = through(fast)
        targets[f"{mode} mcp SDK ClientSession"] = through(session)
    raw = urls[f"mcp_{RAW_MODE}"]
    targets[f"{RAW_MODE} bare POST {MODERN}"] = lambda args, i: raw_call(http, raw, args, i, MODERN)
    targets[f"{RAW_MODE} bare POST {HANDSHAKE}"] = lambda args, i: raw_call(http, raw, args, i, HANDSHAKE)
    return targets


def through(client: Any) -> Target:
    """A recall through an MCP client library (fastmcp's ``Client`` or the SDK's ``ClientSession``)."""
    async def call(args: dict[str, Any], index: int) -> None:
        if (await client.call_tool("recall", args)).is_error:
            raise RuntimeError("a recall through MCP failed")
    return call


async def checked(response: Awaitable[httpx.Response]) -> None:
    (await response).raise_for_status()


async def raw_call(http: httpx.AsyncClient, url: str, args: dict[str, Any], index: int, version: str) -> None:
    """tools/call as one bare JSON-RPC POST: no client library, no handshake, no session (a stateless server)."""
    params: dict[str, Any] = {"name": "recall", "arguments": args}
    headers = {"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": version}
    if version == MODERN:
        params["_meta"] = {PROTOCOL_VERSION_META_KEY: version, CLIENT_CAPABILITIES_META_KEY: {}}
        headers |= {"Mcp-Method": "tools/call", "Mcp-Name": "recall"}
    body = {"jsonrpc": "2.0", "id": index, "method": "tools/call", "params": params}
    response = await http.post(url, json=body, headers=headers)
    response.raise_for_status()
    if b'"isError":true' in response.content or b'"error":{' in response.content:
        raise RuntimeError(f"the bare tools/call failed: {response.text[:300]}")


def timed_sync(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


async def timed(call: Target, args: dict[str, Any], index: int) -> float:
    start = time.perf_counter()
    await call(args, index)
    return time.perf_counter() - start


def summarise(samples: dict[str, list[float]]) -> dict[str, Any]:
    """Each target's latency, and its paired difference per query over the engine and over the floor."""
    out: dict[str, Any] = {}
    for name, values in samples.items():
        entry: dict[str, Any] = {"latency": metrics.latency_summary(values)}
        for base in ("engine", "floor"):
            if name not in ("engine", base):
                entry[f"minus_{base}"] = metrics.latency_summary(
                    [v - b for v, b in zip(values, samples[base], strict=True)])
        out[name] = entry
    return out


def render(result: dict[str, Any]) -> str:
    lines = [f"{result['memories']} memories, {result['calls']} recalls per target, load "
             f"{result['load_average']}, steal {result['cpu_steal_percent']}%", "",
             "| target | p50 ms | p95 ms | minus engine p50 | minus floor p50 |", "| --- | --- | --- | --- | --- |"]
    for name, entry in result["targets"].items():
        def p50(key: str, e: dict[str, Any] = entry) -> str:
            return f"{e[key]['p50_ms']:.2f}" if key in e else "-"
        lines.append(f"| {name} | {p50('latency')} | {entry['latency']['p95_ms']:.2f} | {p50('minus_engine')} | "
                     f"{p50('minus_floor')} |")
    for name, table in result.get("profile", {}).items():
        lines += ["", f"{name}: CPU ms per call by layer", "", stacks.render(table)]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
