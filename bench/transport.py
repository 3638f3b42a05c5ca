"""What MCP over HTTP adds to a recall, against its floor, in one run:
``python -m bench.transport``.

A private Valkey with N memories of the bench corpus; then, each in a process of its own on the same
store, the bare Starlette floor (``bench.floor_server``) and ``kenning mcp`` once per transport
mode. For every query, in turn: the engine call in this process, the floor over HTTP, and each MCP
server through a kept-open fastmcp ``Client``, the official SDK's ``ClientSession`` and bare
JSON-RPC POSTs (the server's cost without a client library). Every number is paired per query, so
the box's drift does not land on one side, and the order of the HTTP targets rotates from query to
query, so none always runs right after the in-process engine call.

Every answer must be a recall result; those whose hits are not the engine call's are counted
(``bench.clients``). ``--baseline DIR`` also serves another checkout's ``kenning mcp`` (stateless,
JSON) on the same store and calls it by bare POST in the same rotation, so a change to the server is
measured against the code before it in one run (``minus baseline``), not against a
run made minutes earlier.

``--profile DIR`` runs each server under ``py-spy record`` (raw collapsed stacks in DIR) and prints,
per process, the CPU per call spent in each layer (``bench.stacks``).
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
from collections.abc import Iterator
from contextlib import AsyncExitStack, ExitStack, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import httpx

from bench import families, mcp, metrics, stacks, system
from bench.clients import (
    HANDSHAKE,
    MODERN,
    Target,
    call_all,
    floor_call,
    raw_call,
    sdk_session,
    through,
)
from bench.corpus import generate
from bench.families import Query
from bench.run import ACTOR, free_port
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.bulk import Bulk
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.embedded import EmbeddedValkey

TOP_K = 10
# beside the bench runs, not on their page
RESULTS = system.ROOT / "bench" / "results" / "transport"
# transport modes: the environment of `kenning mcp` in each
MODES: dict[str, dict[str, str]] = {
    f"{state}_{framing}": {
        "KENNING_MCP_STATELESS": str(state == "stateless").lower(),
        "KENNING_MCP_JSON_RESPONSE": str(framing == "json").lower(),
    }
    for state in ("stateful", "stateless")
    for framing in ("sse", "json")
}
# the mode also called with bare JSON-RPC POSTs (the server's cost alone)
RAW_MODE = "stateless_json"
BASELINE = "baseline"  # with --baseline: another checkout's `kenning mcp`, in RAW_MODE


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.transport", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--memories", type=int, default=10_000, help="memories in the store (default 10000)"
    )
    parser.add_argument("--calls", type=int, default=500, help="recalls per target (default 500)")
    parser.add_argument(
        "--profile", type=Path, help="run the servers under py-spy; raw stacks in this folder"
    )
    parser.add_argument(
        "--modes",
        default=",".join(MODES),
        help=(
            f"transport modes, comma-separated (default "
            f"{','.join(MODES)}; {RAW_MODE} is always one)"
        ),
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help=(
            f"another checkout (a git worktree of main, say): its `kenning mcp` ({RAW_MODE}) is "
            "served beside this tree's and called by bare POSTs in the same rotation: an A/B "
            "of server code in one run"
        ),
    )
    args = parser.parse_args(argv)
    if args.baseline is not None and not (args.baseline / "mcp_server" / "app.py").is_file():
        parser.error(
            f"--baseline {args.baseline}: not a Kenning checkout (no mcp_server/app.py in it)"
        )
    modes = list(dict.fromkeys([*args.modes.split(","), RAW_MODE]))
    if unknown := [m for m in modes if m not in MODES]:
        parser.error(f"unknown mode(s) {', '.join(unknown)}: choose from {', '.join(MODES)}")
    cpu = system.cpu_times()
    result = run(args.memories, args.calls, args.profile, modes, args.baseline)
    result["cpu_steal_percent"] = system.steal_percent(cpu, system.cpu_times())
    result["load_average"] = [round(x, 2) for x in os.getloadavg()]
    result["machine"] = system.machine()
    print(render(result))
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-{result['memories']}.json"
    path.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path}")
    return 0


def run(
    memories: int, calls: int, profile: Path | None, modes: list[str], baseline: Path | None = None
) -> dict[str, Any]:
    corpus = generate("10k" if memories <= 10_000 else "100k", 7)
    with tempfile.TemporaryDirectory(prefix="kenning-transport-") as tmp:
        settings = Settings(
            data_dir=Path(tmp), valkey_port=free_port(), key_prefix="bench:", valkey_url=None
        )
        with EmbeddedValkey(settings):
            from kenning_cli.services import open_engine

            engine = open_engine(settings)
            items = corpus.items[:memories]
            Bulk(engine.ctx, engine.memories).remember_many(
                [
                    Draft(
                        i.content,
                        namespace=i.namespace,
                        project=i.project,
                        tags=i.tags,
                        kind=i.kind,
                    )
                    for i in items
                ],
                actor=ACTOR,
            )
            _, secret = engine.tokens.create("bench-transport", "read", actor=ACTOR)
            queries = families.paraphrase_queries(
                corpus, random.Random("transport"), calls + mcp.WARMUP
            )
            with ExitStack() as stack:
                urls = {
                    name: stack.enter_context(server(settings, env, profile, name))
                    for name, env in [("floor", {}), *((f"mcp_{m}", MODES[m]) for m in modes)]
                }
                if baseline is not None:
                    urls[BASELINE] = stack.enter_context(
                        server(
                            settings, MODES[RAW_MODE], profile, BASELINE, root=baseline.resolve()
                        )
                    )
                samples, differ = anyio.run(paired, engine, urls, secret, queries)
            out: dict[str, Any] = {
                "memories": len(items),
                "calls": calls,
                "targets": summarise(samples),
                "hits_differ_from_engine": differ,
            }
    if profile is not None:
        out["profile"] = {
            name: stacks.breakdown(profile / f"{name}.txt", served(name) * (calls + mcp.WARMUP))
            for name in urls
        }
    return out


def served(name: str) -> int:
    """Recalls each server answers per query: the floor one; an MCP server one per
    client, the bare POSTs too."""
    if name == "floor":
        return 1
    return 2 + (2 if name in (f"mcp_{RAW_MODE}", BASELINE) else 0)


@contextmanager
def server(
    settings: Settings,
    env: dict[str, str],
    profile: Path | None,
    name: str,
    root: Path = system.ROOT,
) -> Iterator[str]:
    """The floor (``name == "floor"``) or ``kenning mcp`` in a child process, running the code of
    the checkout at ``root``; yields its URL once it listens."""
    port = free_port()
    module = "bench.floor_server" if name == "floor" else "kenning_cli"
    command = [sys.executable, "-m", module, *([] if name == "floor" else ["mcp"])]
    if profile is not None:
        profile.mkdir(parents=True, exist_ok=True)
        spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        command = [
            spy,
            "record",
            "--format",
            "raw",
            "--rate",
            str(stacks.RATE),
            "--nonblocking",
            "-o",
            str(profile / f"{name}.txt"),
            "--",
            *command,
        ]
    log_path = settings.data_dir / f"{name}.log"
    with log_path.open("w", encoding="utf-8") as log:
        child = subprocess.Popen(
            command,
            env={
                **mcp.server_env(settings, port),
                **env,
                "PYTHONPATH": os.pathsep.join(
                    [str(root), *filter(None, [os.environ.get("PYTHONPATH")])]
                ),
            },
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=root,
        )  # `-m` puts cwd first
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


async def paired(
    engine: Engine, urls: dict[str, str], secret: str, queries: list[Query]
) -> tuple[dict[str, list[float]], dict[str, int]]:
    """Per query, one call to each target in turn; seconds per target, the first WARMUP dropped,
    and per target the number of queries whose hits were not the engine call's."""
    samples: dict[str, list[float]] = {}
    differ: dict[str, int] = {}
    async with AsyncExitStack() as stack:
        targets = await connect(stack, urls, secret)
        differ = dict.fromkeys(targets, 0)
        for index, query in enumerate(queries):
            args = {"query": query.text, "projects": [query.project], "top_k": TOP_K}
            ask = RecallRequest(
                query.text,
                projects=[query.project] if query.project else None,
                top_k=TOP_K,
                actor=ACTOR,
            )
            start = time.perf_counter()
            expected = [hit.memory.key for hit in engine.recaller.recall(ask).hits]
            took = time.perf_counter() - start
            timings, wrong = await call_all(targets, args, index, expected)
            timings["engine"] = took
            for name in wrong:
                differ[name] += 1
            if index >= mcp.WARMUP:
                for name, seconds in timings.items():
                    samples.setdefault(name, []).append(seconds)
    return samples, differ


async def connect(stack: AsyncExitStack, urls: dict[str, str], secret: str) -> dict[str, Target]:
    """Every target, connected once: the floor, each server through both clients, and the bare
    POSTs (to the stateless JSON server and, with ``--baseline``, to the baseline's: it gets the
    same calls as this tree's)."""
    from fastmcp import Client

    http = await stack.enter_async_context(
        httpx.AsyncClient(headers={"Authorization": f"Bearer {secret}"}, timeout=30)
    )
    targets: dict[str, Target] = {"floor": lambda args, _: floor_call(http, urls["floor"], args)}
    for name, url in urls.items():
        if name == "floor":
            continue
        label = f"{BASELINE} {RAW_MODE}" if name == BASELINE else name.removeprefix("mcp_")
        fast = await stack.enter_async_context(Client(url, auth=secret))
        targets[f"{label} fastmcp Client"] = through(fast)
        targets[f"{label} mcp SDK ClientSession"] = through(await sdk_session(stack, url, secret))
        if label.endswith(RAW_MODE):
            for version in (MODERN, HANDSHAKE):
                targets[f"{label} bare POST {version}"] = functools.partial(
                    raw_post, http, url, version
                )
    return targets


async def raw_post(
    http: httpx.AsyncClient, url: str, version: str, args: dict[str, Any], index: int
) -> list[str]:
    return await raw_call(http, url, args, index, version)


def summarise(samples: dict[str, list[float]]) -> dict[str, Any]:
    """Each target's latency, and its paired difference per query over the engine, the floor and
    (with ``--baseline``) the baseline server's bare POST."""
    out: dict[str, Any] = {}
    for name, values in samples.items():
        entry: dict[str, Any] = {"latency": metrics.latency_summary(values)}
        counterpart = f"{BASELINE} {name}"  # the same client against the baseline server
        for base, key in (
            ("engine", "minus_engine"),
            ("floor", "minus_floor"),
            (counterpart, "minus_baseline"),
        ):
            if name not in ("engine", base) and base in samples:
                entry[key] = metrics.latency_summary(
                    [v - b for v, b in zip(values, samples[base], strict=True)]
                )
        out[name] = entry
    return out


def render(result: dict[str, Any]) -> str:
    lines = [
        f"{result['memories']} memories, {result['calls']} recalls per target, load "
        f"{result['load_average']}, steal {result['cpu_steal_percent']}%",
        "",
        "| target | p50 ms | p95 ms | minus engine p50 | minus floor p50 | minus baseline p50 "
        "| hits not the engine's |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    differ = result.get("hits_differ_from_engine", {})
    for name, entry in result["targets"].items():

        def p50(key: str, e: dict[str, Any] = entry) -> str:
            return f"{e[key]['p50_ms']:.2f}" if key in e else "-"

        lines.append(
            f"| {name} | {p50('latency')} | {entry['latency']['p95_ms']:.2f} | "
            f"{p50('minus_engine')} | {p50('minus_floor')} | {p50('minus_baseline')} | "
            f"{differ.get(name, '-')} |"
        )
    for name, table in result.get("profile", {}).items():
        lines += ["", f"{name}: CPU ms per call by layer", "", stacks.render(table)]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
