"""Many agents at once (issue 38): ``kenning bench --load``.

A private embedded Valkey holding a slice of the bench corpus, and ``kenning mcp`` (stateless, JSON
answers: the server's defaults) in a process of its own, once per *variant* (an environment of
``KENNING_*`` values: the A/B of one run). For each N in ``clients`` and each variant in turn
(interleaved, so the box's drift lands on both), N concurrent clients call the server over real
HTTP for a fixed time. Each client has its own token and its own ``httpx.AsyncClient`` (its own
connections) and calls ``tools/call`` as bare JSON-RPC POSTs -- the stateless JSON mode the server
runs has no MCP session to open, so a client library would only add its own parsing to the
timings. A client picks a tool from the mix (recall / recall_index / remember / briefing, default
70/10/15/5), then pauses for a time drawn from ``pause`` before its next call.

Per N and variant: calls per second (all, and of the query tools), p50/p95/p99 per tool, errors by
code (the engine's code at the head of a tool error, ``http_<status>``, or the exception's
class), the server's RSS (every process of it), and, measured right after in this process on the
same texts the query tools sent, the embedding alone: one text at a time, and from N threads at
once -- the ceiling the recall throughput is read against.

Results in ``bench/results/load/`` (``bench.report`` puts the newest per engine on the page).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from mcp_types import CLIENT_CAPABILITIES_META_KEY, PROTOCOL_VERSION_META_KEY

from bench import families, mcp, metrics, system
from bench.clients import MODERN, json_rpc_reply
from bench.corpus import filler, generate, slots
from bench.run import ACTOR, free_port
from kenning.core.settings import Settings
from kenning.memory.bulk import Bulk
from kenning.memory.memories import Draft
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder

RESULTS = system.ROOT / "bench" / "results" / "load"
TOOLS = ("recall", "recall_index", "remember", "briefing")
QUERY_TOOLS = ("recall", "recall_index")  # the calls whose floor is one query embedding
DEFAULT_MIX = (0.70, 0.10, 0.15, 0.05)
GOAL_CLIENTS = 16
GOAL_THROUGHPUT_RATIO = 1.5  # recall throughput over the one-at-a-time embedding throughput
GOAL_TAIL_RATIO = 3.0  # recall p99 over its p50
CEILING_MIN_TEXTS = 200
PAUSED_SAMPLES = 10
PAUSE_BEFORE = 0.2  # seconds before an after-pause embedding
CEILING_MAX_TEXTS = 800  # keeps a level short on a slow box
CALL_TIMEOUT = 60.0
# the mix calls recall_index, a curator tool: the load clients see every tool (docs/mcp-tools.md)
PROFILE = {"X-Kenning-Profile": "all"}


@dataclass(frozen=True)
class LoadConfig:
    clients: tuple[int, ...] = (1, 4, 16, 64)
    seconds: float = 20.0  # per N and variant
    mix: tuple[float, ...] = DEFAULT_MIX  # weights of TOOLS, in order
    pause: str = "exp:10"  # see ``pauser``
    memories: int = 2000
    seed: int = 7
    # name -> KENNING_* environment of that server; the first is the page's headline
    variants: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (("default", ()),)


def pauser(spec: str, rng: random.Random) -> Callable[[], float]:
    """Seconds between a client's calls, drawn from ``spec``: ``none``, ``fixed:MS``,
    ``exp:MEAN_MS`` (exponential: arrivals without memory), ``uniform:LO_MS:HI_MS``,
    ``lognormal:MEDIAN_MS:SIGMA``. A ValueError for anything else."""
    kind, _, rest = spec.partition(":")
    args = [float(x) for x in rest.split(":")] if rest else []
    if kind == "none" and not args:
        return lambda: 0.0
    if kind == "fixed" and len(args) == 1:
        return lambda: args[0] / 1000
    if kind == "exp" and len(args) == 1 and args[0] > 0:
        return lambda: rng.expovariate(1000 / args[0])
    if kind == "uniform" and len(args) == 2 and 0 <= args[0] <= args[1]:
        return lambda: rng.uniform(args[0], args[1]) / 1000
    if kind == "lognormal" and len(args) == 2 and args[0] > 0:
        return lambda: rng.lognormvariate(math.log(args[0] / 1000), args[1])
    raise ValueError(
        f"pause {spec!r}: use none, fixed:MS, exp:MEAN_MS, uniform:LO_MS:HI_MS or "
        "lognormal:MEDIAN_MS:SIGMA"
    )


def parse_mix(text: str) -> tuple[float, ...]:
    """``70/10/15/5`` (recall / recall_index / remember / briefing) -> weights. Pure."""
    parts = [float(x) for x in text.split("/")]
    if len(parts) != len(TOOLS) or any(p < 0 for p in parts) or sum(parts) <= 0:
        raise ValueError(
            f"mix {text!r}: four non-negative weights, recall/recall_index/remember/briefing"
        )
    return tuple(parts)


@dataclass
class Workload:
    """What the clients send: query texts with their project, texts to remember, projects."""

    queries: list[tuple[str, str | None]]
    writes: list[tuple[str, str | None]]
    projects: list[str]
    counter: int = 0

    def arguments(self, tool: str, rng: random.Random) -> tuple[dict[str, Any], str | None]:
        """A call's arguments, and the text it embeds as a query (None: not a query tool)."""
        if tool in QUERY_TOOLS:
            text, project = rng.choice(self.queries)
            return {"query": text, "projects": [project] if project else None, "top_k": 10}, text
        if tool == "remember":
            self.counter += 1
            text, project = rng.choice(self.writes)
            # a new text each time: a repeat would be refused as a duplicate (no embedding cost)
            content = f"{text} (load note {self.counter} of client run {rng.random():.6f})"
            return {"content": content, "project": project}, None
        return {"project": rng.choice(self.projects)}, None


@dataclass
class Sample:
    tool: str
    seconds: float
    error: str | None


@dataclass
class Level:
    """One N against one variant: every call's sample and the query texts sent."""

    variant: str
    clients: int
    samples: list[Sample] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    wall: float = 0.0


def execute(
    config: LoadConfig,
    embedder: Embedder,
    base: Settings,
    progress: Callable[[str], None] = print,
) -> dict[str, Any]:
    """The whole load run; the returned dict is what ``bench/results/load/*.json`` holds."""
    corpus = generate("10k", config.seed)
    rng = random.Random(f"load:{config.seed}")
    items = corpus.items[: config.memories]
    with tempfile.TemporaryDirectory(prefix="kenning-load-") as tmp:
        settings = base.model_copy(
            update={
                "data_dir": Path(tmp),
                "valkey_port": free_port(),
                "key_prefix": "bench:",
                "valkey_url": None,
            }
        )
        with EmbeddedValkey(settings) as valkey_server:
            from kenning.store import search_module
            from kenning_cli.services import open_engine

            engine = open_engine(settings, embedder)
            found = search_module.detect(engine.ctx.store.client)
            engine_name = f"{found.name} {found.version}" if found else "unknown"
            progress(f"search module {engine_name}; importing {len(items)} memories")
            Bulk(engine.ctx, engine.memories).remember_many(
                [
                    Draft(i.content, namespace=i.namespace, project=i.project, tags=i.tags)
                    for i in items
                ],
                actor=ACTOR,
            )
            projects = sorted({i.project for i in items if i.project})
            queries = families.paraphrase_queries(corpus, rng, 400)
            workload = Workload(
                queries=[(q.text, q.project if q.project in projects else None) for q in queries],
                writes=[(filler(rng, slots(rng, p)), p) for p in projects for _ in range(4)],
                projects=projects,
            )
            secrets = [
                engine.tokens.create(f"load-{i}", "write", actor=ACTOR)[1]
                for i in range(max(config.clients))
            ]
            levels: list[dict[str, Any]] = []
            valkey_pid = valkey_server.process.pid if valkey_server.process else None
            with contextlib.ExitStack() as stack:
                servers = {
                    name: stack.enter_context(server(settings, dict(env), name))
                    for name, env in config.variants
                }
                for n in config.clients:
                    for name, (url, pids) in servers.items():
                        progress(f"{n} clients against {name} for {config.seconds:.0f} s")
                        levels.append(
                            one_level(
                                config,
                                workload,
                                secrets[:n],
                                url,
                                pids,
                                name,
                                n,
                                embedder,
                                valkey_pid,
                            )
                        )
            engine.close()
    out: dict[str, Any] = {
        "config": asdict(config),
        "tools": list(TOOLS),
        "search_module": engine_name,
        "memories": len(items),
        "client": "bare JSON-RPC tools/call POSTs, one httpx.AsyncClient and token per client "
        "(stateless JSON server: no MCP session to open)",
        "levels": levels,
    }
    out["goals"] = goals(levels)
    return out


def one_level(
    config: LoadConfig,
    workload: Workload,
    secrets: list[str],
    url: str,
    pids: Callable[[], list[int]],
    variant: str,
    n: int,
    embedder: Embedder,
    valkey_pid: int | None = None,
) -> dict[str, Any]:
    load_before = [round(x, 2) for x in os.getloadavg()]
    servers = pids()
    cpu_before = {
        "server": cpu_seconds(servers),
        "valkey": cpu_seconds([valkey_pid] if valkey_pid else []),
        "clients": cpu_seconds([os.getpid()]),
    }
    rss: list[float] = []
    per_process: dict[int, float] = {}

    def sample() -> None:
        each = {p: system.rss_mb(p) for p in pids()}
        for p, mb in each.items():
            per_process[p] = max(per_process.get(p, 0.0), mb)
        rss.append(sum(each.values()))

    level = asyncio.run(
        drive(
            config,
            workload,
            secrets,
            url,
            variant,
            n,
            sample,
        )
    )
    summary = summarise(level)
    cpu_after = {
        "server": cpu_seconds(servers),
        "valkey": cpu_seconds([valkey_pid] if valkey_pid else []),
        "clients": cpu_seconds([os.getpid()]),
    }
    # CPU per answered call, by process group: where the two cores went
    answered = max(sum(1 for s in level.samples if s.error is None), 1)
    summary["cpu_ms_per_call"] = {
        name: (cpu_after[name] - cpu_before[name]) * 1000 / answered for name in cpu_before
    }
    summary["server_rss_mb"] = {
        "max": max(rss, default=float("nan")),
        "processes": len(pids()),
        "per_process_max": sorted(per_process.values()),
    }
    summary["ceiling"] = ceiling(embedder, level.texts, n)
    summary["load_average"] = {"start": load_before, "end": [round(x, 2) for x in os.getloadavg()]}
    one = summary["ceiling"]["one_at_a_time_per_s"]
    summary["recall_over_embedding_one_at_a_time"] = (
        summary["query_calls_per_s"] / one if one else None
    )
    return summary


async def drive(
    config: LoadConfig,
    workload: Workload,
    secrets: list[str],
    url: str,
    variant: str,
    n: int,
    sample_rss: Callable[[], None],
) -> Level:
    """Every client warms up (one recall each, not kept: the server's first call per token
    verifies it), then all run for ``config.seconds``."""
    level = Level(variant, n)
    ready: list[None] = []
    go = asyncio.Event()
    window: list[float] = []

    async def watch() -> None:
        await go.wait()
        while time.perf_counter() < window[1]:
            sample_rss()
            await asyncio.sleep(0.5)

    async def client(secret: str, index: int) -> None:
        rng = random.Random(f"client:{config.seed}:{n}:{index}")
        pause = pauser(config.pause, rng)
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        async with httpx.AsyncClient(
            headers={"Authorization": f"Bearer {secret}", **PROFILE},
            timeout=CALL_TIMEOUT,
            limits=limits,
        ) as http:
            arguments, _ = workload.arguments("recall", rng)
            await call_tool(http, url, "recall", arguments, 0)
            ready.append(None)
            if len(ready) == n:
                now = time.perf_counter()
                window.extend((now, now + config.seconds))
                go.set()
            await go.wait()
            await asyncio.sleep(rng.uniform(0, 0.05))  # not all at the same instant
            calls = 0
            while time.perf_counter() < window[1]:
                tool = rng.choices(TOOLS, weights=config.mix)[0]
                arguments, text = workload.arguments(tool, rng)
                calls += 1
                start = time.perf_counter()
                error = await call_tool(http, url, tool, arguments, calls)
                level.samples.append(Sample(tool, time.perf_counter() - start, error))
                if text is not None:
                    level.texts.append(text)
                await asyncio.sleep(pause())

    await asyncio.gather(watch(), *(client(s, i) for i, s in enumerate(secrets)))
    level.wall = time.perf_counter() - window[0]
    return level


async def call_tool(
    http: httpx.AsyncClient, url: str, tool: str, arguments: dict[str, Any], index: int
) -> str | None:
    """One ``tools/call``; None when it answered a result, else its error code."""
    arguments = {k: v for k, v in arguments.items() if v is not None}
    body = {
        "jsonrpc": "2.0",
        "id": index,
        "method": "tools/call",
        "params": {
            "name": tool,
            "arguments": arguments,
            "_meta": {PROTOCOL_VERSION_META_KEY: MODERN, CLIENT_CAPABILITIES_META_KEY: {}},
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": "tools/call",
        "Mcp-Name": tool,
    }
    try:
        response = await http.post(url, json=body, headers=headers)
    except httpx.HTTPError as exc:
        return type(exc).__name__
    if response.status_code != 200:
        return f"http_{response.status_code}"
    try:
        reply = json_rpc_reply(response)
    except (RuntimeError, ValueError):
        return "not_json_rpc"
    result = reply.get("result")
    if "error" in reply or not isinstance(result, dict):
        return f"json_rpc_{reply.get('error', {}).get('code', 'error')}"
    if result.get("isError"):
        return error_code(result)
    return None


def error_code(result: dict[str, Any]) -> str:
    """The engine's code at the head of a tool error's text (``overloaded: ...``). Pure."""
    content = result.get("content") or [{}]
    text = str(content[0].get("text", "")) if isinstance(content[0], dict) else ""
    head = text.split(":", 1)[0].strip()
    return head if head and " " not in head and len(head) < 40 else "tool_error"


def summarise(level: Level) -> dict[str, Any]:
    ok = [s for s in level.samples if s.error is None]
    errors: dict[str, int] = {}
    for s in level.samples:
        if s.error is not None:
            errors[s.error] = errors.get(s.error, 0) + 1
    wall = max(level.wall, 1e-9)
    return {
        "variant": level.variant,
        "clients": level.clients,
        "seconds": level.wall,
        "calls": len(level.samples),
        "calls_per_s": len(ok) / wall,
        "query_calls_per_s": sum(1 for s in ok if s.tool in QUERY_TOOLS) / wall,
        "tools": {
            tool: metrics.latency_summary([s.seconds for s in ok if s.tool == tool])
            for tool in TOOLS
        },
        "errors": errors,
    }


def ceiling(embedder: Embedder, texts: list[str], concurrency: int) -> dict[str, Any]:
    """The embedding alone of the texts the query tools sent (repeated up to a minimum), one at a
    time and from ``concurrency`` threads at once: texts per second each."""
    embedder = getattr(embedder, "inner", embedder)  # the model itself, not the queue before it
    if not texts:
        return {"texts": 0, "one_at_a_time_per_s": None, "at_concurrency_per_s": None}
    work = (texts * (CEILING_MIN_TEXTS // len(texts) + 1))[: max(len(texts), CEILING_MIN_TEXTS)]
    work = work[:CEILING_MAX_TEXTS]
    start = time.perf_counter()
    for text in work:
        embedder.embed(text)
    one = len(work) / (time.perf_counter() - start)
    start = time.perf_counter()
    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(embedder.embed, work))
    many = len(work) / (time.perf_counter() - start)
    hot, paused = [], []
    for text in work[:PAUSED_SAMPLES]:  # the floor as agents see it (bench/embed_floor.py)
        embedder.embed(text)
        start = time.perf_counter()
        embedder.embed(text)
        hot.append(time.perf_counter() - start)
        time.sleep(PAUSE_BEFORE)
        start = time.perf_counter()
        embedder.embed(text)
        paused.append(time.perf_counter() - start)
    return {
        "hot_p50_ms": metrics.percentile(hot, 50) * 1000,
        "after_pause_p50_ms": metrics.percentile(paused, 50) * 1000,
        "texts": len(work),
        "concurrency": concurrency,
        "one_at_a_time_per_s": one,
        "at_concurrency_per_s": many,
    }


def goals(levels: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue's goals at GOAL_CLIENTS clients, per variant: met or not, with the ratios. Pure."""
    out: dict[str, Any] = {}
    for level in levels:
        if level["clients"] != GOAL_CLIENTS:
            continue
        recall = level["tools"]["recall"]
        ratio = level.get("recall_over_embedding_one_at_a_time")
        tail = recall["p99_ms"] / recall["p50_ms"] if recall["n"] and recall["p50_ms"] else None
        out[level["variant"]] = {
            "throughput_ratio": ratio,
            "throughput_met": ratio is not None and ratio >= GOAL_THROUGHPUT_RATIO,
            "p99_over_p50": tail,
            "tail_met": tail is not None and tail <= GOAL_TAIL_RATIO,
            "errors": sum(level["errors"].values()),
            "errors_met": not level["errors"],
        }
    return out


@contextlib.contextmanager
def server(
    settings: Settings, env: dict[str, str], name: str
) -> Iterator[tuple[str, Callable[[], list[int]]]]:
    """``kenning mcp`` in a child process with ``env`` on top of the bench's; yields its URL and
    a function listing its processes (itself and any workers it forks)."""
    port = free_port()
    log_path = settings.data_dir / f"load-{name}.log"
    with log_path.open("w", encoding="utf-8") as log:
        child = subprocess.Popen(
            [sys.executable, "-m", "kenning_cli", "mcp"],
            env={**mcp.server_env(settings, port), **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=system.ROOT,
        )
        try:
            mcp.wait_listening(child, port, log_path)
            yield f"http://127.0.0.1:{port}/mcp", lambda: [child.pid, *descendants(child.pid)]
        finally:
            child.send_signal(2)
            try:
                child.wait(timeout=mcp.STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of the processes (and their finished children) so far, from
    /proc/PID/stat; 0 for a process that is gone."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        stat = Path(f"/proc/{pid}/stat")
        if not stat.exists():
            continue
        fields = stat.read_text(encoding="utf-8").rsplit(")", 1)[1].split()
        total += sum(int(x) for x in fields[11:13]) / tick  # utime, stime
    return total


def descendants(pid: int) -> list[int]:
    """The child processes of ``pid`` (workers), from /proc; empty where there is none."""
    out: list[int] = []
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.exists():
        for child in children.read_text(encoding="utf-8").split():
            out += [int(child), *descendants(int(child))]
    return out


def write(result: dict[str, Any], folder: Path = RESULTS) -> Path:
    import json

    folder.mkdir(parents=True, exist_ok=True)
    engine = str(result.get("search_module", "")).split(" ")[0] or "engine"
    path = folder / f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-load-{engine}.json"
    path.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return path


def render(result: dict[str, Any]) -> list[str]:
    """The load table of one result (markdown lines). Pure."""
    lines = [
        "| engine | variant | clients | calls/s | query calls/s | embed 1-at-a-time/s | "
        "embed at N/s | recall/embed-1 | embed hot / after 200 ms p50 | "
        "recall p50 / p95 / p99 ms | remember p50 / p99 ms | "
        "server / valkey / bench CPU ms per call | errors | server RSS MB | load |",
        "| " + " | ".join(["---"] * 15) + " |",
    ]
    for level in result["levels"]:
        recall, remember, ceil = (
            level["tools"]["recall"],
            level["tools"]["remember"],
            level["ceiling"],
        )
        errors = ", ".join(f"{k} {v}" for k, v in sorted(level["errors"].items())) or "0"
        ratio = level.get("recall_over_embedding_one_at_a_time")
        lines.append(
            f"| {result['search_module']} | {level['variant']} | {level['clients']} | "
            f"{level['calls_per_s']:.1f} | {level['query_calls_per_s']:.1f} | "
            f"{_num(ceil.get('one_at_a_time_per_s'))} | {_num(ceil.get('at_concurrency_per_s'))} | "
            f"{_num(ratio, 2)} | {_num(ceil.get('hot_p50_ms'), 2)} / "
            f"{_num(ceil.get('after_pause_p50_ms'), 2)} | "
            f"{_num(recall['p50_ms'])} / {_num(recall['p95_ms'])} / "
            f"{_num(recall['p99_ms'])} | {_num(remember['p50_ms'])} / {_num(remember['p99_ms'])} | "
            f"{_cpu(level)} | {errors} | {_num(level['server_rss_mb']['max'])} "
            f"({_per_process(level)}) | {level['load_average']['start'][0]} |"
        )
    return lines


def _cpu(level: dict[str, Any]) -> str:
    cpu = level.get("cpu_ms_per_call")
    if not cpu:
        return "-"
    return " / ".join(f"{cpu[k]:.1f}" for k in ("server", "valkey", "clients"))


def _per_process(level: dict[str, Any]) -> str:
    each = level["server_rss_mb"].get("per_process_max")
    if not each:
        return f"{level['server_rss_mb']['processes']} proc"
    return " + ".join(f"{mb:.0f}" for mb in each)


def _num(value: Any, digits: int = 1) -> str:
    if not isinstance(value, int | float) or math.isnan(value):
        return "-"
    return f"{value:.{digits}f}"


LOAD_CHART = system.ROOT / "docs" / "benchmarks-load.png"


def newest(folder: Path = RESULTS) -> list[dict[str, Any]]:
    """The newest load result per search engine, oldest engine name first."""
    import json

    found: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        result = json.loads(path.read_text(encoding="utf-8"))
        result["_file"] = path.name
        found[str(result.get("search_module", "")).split(" ")[0]] = result
    return [found[k] for k in sorted(found)]


def page_section(folder: Path = RESULTS, chart_path: Path = LOAD_CHART) -> list[str]:
    """The benchmark page's load section: a table per engine, the goals, and the chart."""
    results = newest(folder)
    if not results:
        return ["No load run yet (`kenning bench --load`)."]
    lines: list[str] = []
    for result in results:
        config = result["config"]
        lines += [
            f"`bench/results/load/{result['_file']}`: {result['memories']} memories, "
            f"{config['seconds']:.0f} s per N and variant, mix "
            "recall/recall_index/remember/briefing "
            f"{'/'.join(f'{w:g}' for w in config['mix'])}, pause `{config['pause']}`; "
            f"{result['client']}.",
            "",
            *render(result),
            "",
        ]
        for variant, goal in result.get("goals", {}).items():
            lines.append(
                f"- goals at {GOAL_CLIENTS} clients ({result['search_module']}, {variant}): "
                f"recall throughput / one-at-a-time embedding {_num(goal['throughput_ratio'], 2)} "
                f"(goal >= {GOAL_THROUGHPUT_RATIO}: "
                f"{'met' if goal['throughput_met'] else 'NOT met'}); recall p99 / p50 "
                f"{_num(goal['p99_over_p50'], 2)} (goal <= {GOAL_TAIL_RATIO}: "
                f"{'met' if goal['tail_met'] else 'NOT met'}); errors {goal['errors']} "
                f"({'met' if goal['errors_met'] else 'NOT met'})"
            )
        lines.append("")
    if load_chart(results, chart_path):
        lines += [f"![throughput and p99 against clients]({chart_path.name})", ""]
    return lines


def load_chart(results: list[dict[str, Any]], path: Path) -> Path | None:
    """Query calls per second and recall p99 against N, one line per engine and variant; None
    without matplotlib (the `bench` extra)."""
    import importlib

    try:
        importlib.import_module("matplotlib").use("Agg")
        plt: Any = importlib.import_module("matplotlib.pyplot")
    except ImportError:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8), dpi=110)
    for result in results:
        engine = str(result["search_module"]).split(" ")[0]
        for variant in dict.fromkeys(lv["variant"] for lv in result["levels"]):
            rows = [lv for lv in result["levels"] if lv["variant"] == variant]
            ns = [lv["clients"] for lv in rows]
            label = f"{engine} {variant}"
            left.plot(ns, [lv["query_calls_per_s"] for lv in rows], "o-", label=label)
            left.plot(
                ns,
                [lv["ceiling"]["one_at_a_time_per_s"] for lv in rows],
                "x:",
                label=f"{label}: embedding 1-at-a-time",
            )
            right.plot(ns, [lv["tools"]["recall"]["p99_ms"] for lv in rows], "o-", label=label)
    for ax, title in ((left, "recall + recall_index calls/s"), (right, "recall p99 ms")):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("concurrent clients")
        ax.set_title(title, fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6)
    left.set_yscale("log")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path
