"""docs/benchmarks.md and docs/benchmarks-latency.png from the JSON results in bench/results/.

The page is regenerated from the newest result per (corpus size, embedder backend); every target of
issue 6 is listed with the measured value beside it and whether it is met, misses included.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import floors
from bench.families import FAMILIES
from bench.system import ROOT
from kenning.store.search_module import REDISEARCH

DOCS = ROOT / "docs"
PAGE = DOCS / "benchmarks.md"
CHART = DOCS / "benchmarks-latency.png"
SIZE_ORDER = {
    "1k": 1_000,
    "10k": 10_000,
    "100k": 100_000,
    "250k": 250_000,
    "500k": 500_000,
    "1m": 1_000_000,
    "1M": 1_000_000,
}
# the ratio table's columns (1M: the scale point's result files, if present;
# `kenning bench --size 1m`)
RATIO_SIZES = ("10k", "100k", "250k", "500k", "1m", "1M")
Result = dict[str, Any]


def load(folder: Path, *, scale_points: bool = False) -> dict[tuple[str, str], Result]:
    """The newest result per (size, backend + experiment); file names sort by time. Scale points
    (precomputed vectors, no quality families: bench/scale.py) only with
    ``scale_points``, and then only they."""
    out: dict[tuple[str, str], Result] = {}
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if ("scale_point" in data) != scale_points:
            continue
        data["_file"] = path.name
        out[(data["corpus"]["size"], _variant(data))] = data
    return out


def _variant(result: Result) -> str:
    """The backend, the search engine when it is not the embedded default (runs before it was
    recorded ran on RediSearch), plus any Valkey config the run changed (an
    experiment, never the judged run)."""
    extra = ",".join(f"{k}={v}" for k, v in (result.get("valkey_config") or {}).items())
    engine = dig(result, "search_module", "name")
    on = f" on {engine}" if engine not in (None, REDISEARCH) else ""
    return str(result["settings"]["embedding_backend"]) + on + (f" + {extra}" if extra else "")


def dig(data: Any, *path: str) -> Any:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def fmt(value: Any, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def primary(results: dict[tuple[str, str], Result]) -> Result | None:
    """The run the targets are judged on: the largest corpus, the newest backend run of it."""
    if not results:
        return None
    plain = {key: r for key, r in results.items() if not r.get("valkey_config")}
    size = max({s for s, _ in plain}, key=lambda s: SIZE_ORDER.get(s, 0))
    return max((r for (s, _), r in plain.items() if s == size), key=lambda r: r["started_at"])


def _up_rss(result: Result) -> float | None:
    probe = dig(result, "memory", "server_probe", "rss_mb")
    valkey = dig(result, "memory", "valkey_rss_mb")
    return None if probe is None or valkey is None else float(probe) + float(valkey)


Target = tuple[str, Callable[[Result], Any], str, Callable[[Any], bool]]
TARGETS: tuple[Target, ...] = (
    (
        "recall p50 through the engine",
        lambda r: dig(r, "latency", "recall", "total", "p50_ms"),
        "<= 8 ms",
        lambda v: v <= 8,
    ),
    (
        "recall p95 through the engine",
        lambda r: dig(r, "latency", "recall", "total", "p95_ms"),
        "<= 20 ms",
        lambda v: v <= 20,
    ),
    (
        "recall p50 through MCP over HTTP",
        lambda r: dig(r, "mcp", "recall", "p50_ms"),
        "<= 15 ms",
        lambda v: v <= 15,
    ),
    (
        "remember p50 through the engine",
        lambda r: dig(r, "latency", "remember", "total", "p50_ms"),
        "<= 12 ms",
        lambda v: v <= 12,
    ),
    (
        "bulk import rate (memories/s)",
        lambda r: dig(r, "import", "memories_per_second"),
        ">= 300",
        lambda v: v >= 300,
    ),
    (
        "Valkey bytes per memory (all keys)",
        lambda r: dig(r, "import", "bytes_per_memory"),
        "<= 5 KB",
        lambda v: v <= 5120,
    ),
    ("`kenning up` RSS: server process + Valkey (MB)", _up_rss, "<= 700 MB", lambda v: v <= 700),
    (
        "paraphrase recall@5 (b)",
        lambda r: dig(r, "families", "b", "recall@5"),
        ">= 0.90",
        lambda v: v >= 0.90,
    ),
    (
        "exact-identifier recall@5 (h)",
        lambda r: dig(r, "families", "h", "recall@5"),
        ">= 0.98",
        lambda v: v >= 0.98,
    ),
    (
        "suppressed leak rate (e)",
        lambda r: dig(r, "families", "e", "suppressed", "leak_rate"),
        "exactly 0",
        lambda v: v == 0,
    ),
    (
        "forgotten leak rate (e)",
        lambda r: dig(r, "families", "e", "forgotten", "leak_rate"),
        "exactly 0",
        lambda v: v == 0,
    ),
    (
        "superseded leak rate (d)",
        lambda r: dig(r, "families", "d", "leak_rate"),
        "exactly 0",
        lambda v: v == 0,
    ),
    (
        "contradiction precision through remember (j)",
        lambda r: dig(r, "families", "j", "engine", "precision"),
        ">= 0.95",
        lambda v: v >= 0.95,
    ),
    (
        "contradiction recall through remember (j)",
        lambda r: dig(r, "families", "j", "engine", "recall"),
        ">= 0.85",
        lambda v: v >= 0.85,
    ),
    (
        "no-answer abstention (g)",
        lambda r: dig(r, "families", "g", "abstention"),
        ">= 0.90",
        lambda v: v >= 0.90,
    ),
)


def targets_table(result: Result, others: list[Result]) -> list[str]:
    """The judged run's value and verdict per target, then the other runs' values for comparison."""
    rest = [r for r in others if r is not result]
    rows = [
        f"| target | goal | {_label(result)} | met? | "
        + " | ".join(_label(r) for r in rest)
        + " |",
        "| --- | --- | --- | --- |" + " --- |" * len(rest),
    ]
    for name, getter, goal, ok in TARGETS:
        value = getter(result)
        verdict = "not measured" if value is None else ("yes" if ok(value) else "**no**")
        cells = " | ".join(fmt(getter(r)) for r in rest)
        rows.append(f"| {name} | {goal} | {fmt(value)} | {verdict} | {cells} |")
    return rows


def ratio_table(results: list[Result]) -> list[str]:
    """Issue 21's ratios, each beside the absolute numbers it divides,
    per run at 10k, 100k and 1M."""
    runs = [r for r in results if r["corpus"]["size"] in RATIO_SIZES and not r.get("valkey_config")]
    if not runs:
        return ["No run at 10k, 100k or 1M on this page yet."]
    rows = [
        "| ratio (same run) | goal | " + " | ".join(_label(r) for r in runs) + " |",
        "| --- | --- |" + " --- |" * len(runs),
    ]
    for name, goal, cell in RATIO_ROWS:
        rows.append(f"| {name} | {goal} | " + " | ".join(cell(r) for r in runs) + " |")
    return rows


def _recall_cell(r: Result) -> str:
    f = dig(r, "floors", "recall") or {}
    # a scale point: recall and its floors on the same queries
    if not f and dig(r, "scale_point", "floors"):
        s = dig(r, "scale_point", "floors")
        return (
            f"**{fmt(dig(r, 'scale_point', 'ratio_recall_p50_over_floor'))}** "
            f"({fmt(dig(r, 'latency', 'recall', 'total', 'p50_ms'))} / "
            f"{fmt(dig(s, 'embed', 'p50_ms'))} + {fmt(dig(s, 'bare_knn', 'p50_ms'))} ms)"
        )
    if not f:
        return "not measured"
    ratio = fmt(floors.ratios(r)["recall_over_floor"])
    recall, embed, knn = (fmt(dig(f, part, "p50_ms")) for part in ("recall", "embed", "bare_knn"))
    return f"**{ratio}** ({recall} / {embed} + {knn} ms)"


def _mcp_cell(r: Result) -> str:
    """The server alone (a bare JSON-RPC POST from the bare endpoint's own httpx client), then
    through the SDK's and fastmcp's clients; each over the engine and over the bare endpoint.
    Runs before 2026-12-02 09:00 measured fastmcp's client (and the bare POST) only."""
    q = floors.ratios(r)
    if q["mcp_minus_engine_ms"] is None:
        return "not measured"
    parts = [
        f"{label} **+{fmt(q[f'{prefix}minus_engine_ms'])} ms**"
        + (
            ""
            if q[f"{prefix}minus_bare_endpoint_ms"] is None
            else f" ({fmt(q[f'{prefix}minus_bare_endpoint_ms'])} over the bare endpoint)"
        )
        for label, prefix in MCP_CLIENTS
        if q[f"{prefix}minus_engine_ms"] is not None
    ]
    if q["bare_endpoint_minus_engine_ms"] is not None:
        parts.append(f"bare endpoint +{fmt(q['bare_endpoint_minus_engine_ms'])} ms")
    differ = dig(r, "mcp", "recall_paired", "hits_differ") or {}
    if differ:
        wrong = sum(v for k, v in differ.items() if k != "queries")
        parts.append(
            f"answers whose hits were not the engine's: {wrong} of {differ['queries']} queries x "
            f"{len(differ) - 1} targets"
        )
    return "; ".join(parts)


# label, floors.ratios key prefix: the server alone first (the measure),
# then each client library's
MCP_CLIENTS = (
    ("server alone (bare JSON-RPC POST)", "mcp_bare_post_"),
    ("SDK `ClientSession`", "mcp_sdk_"),
    ("fastmcp `Client`", "mcp_"),
)


def _remember_cell(r: Result) -> str:
    ratio = floors.ratios(r)["remember_over_embed"]
    return (
        "not measured"
        if ratio is None
        else (
            f"**{fmt(ratio)}** ({fmt(dig(r, 'latency', 'remember', 'total', 'p50_ms'))} / "
            f"{fmt(dig(r, 'latency', 'remember', 'embed', 'p50_ms'))} ms)"
        )
    )


def _import_cell(r: Result) -> str:
    ratio = floors.ratios(r)["import_over_embedding_rate"]
    imported, embedded = floors.import_rates(r)
    how = "" if dig(r, "import", "interleaved") else ", minutes apart"
    return (
        "not measured"
        if ratio is None
        else f"**{fmt(ratio)}** ({fmt(imported, 0)} / {fmt(embedded, 0)} per s{how})"
    )


def _load_cell(r: Result) -> str:
    if "scale_point" in r:
        return (
            "scale point: vectors derived from real embeddings (bench/scale.py); load "
            f"{fmt(dig(r, 'machine', 'load_average'))}, steal "
            f"{fmt(dig(r, 'machine', 'cpu_steal_percent'), 1)} %"
        )
    return (
        f"load {fmt(dig(r, 'machine', 'load_average'))} -> "
        f"{fmt(dig(r, 'machine', 'load_average_end'))}, steal "
        f"{fmt(dig(r, 'machine', 'cpu_steal_percent'), 1)} %"
    )


RATIO_ROWS: tuple[tuple[str, str, Callable[[Result], str]], ...] = (
    (
        "engine recall p50 / (query embedding p50 + one bare KNN p50), same queries",
        "<= 1.3",
        _recall_cell,
    ),
    (
        "MCP recall − engine recall, p50 of the per-query difference: the server alone, "
        "then with a client library",
        "<= 3 ms, or within 1.5 ms of the bare endpoint",
        _mcp_cell,
    ),
    ("remember p50 / its embedding p50", "<= 1.25", _remember_cell),
    (
        "bulk import rate / embedding-only rate (same texts, interleaved rounds, 2 workers)",
        ">= 0.95",
        _import_cell,
    ),
    ("the machine during the run", "", _load_cell),
)


def family_table(results: list[Result]) -> list[str]:
    head = "| family | metric | " + " | ".join(_label(r) for r in results) + " |"
    rows = [head, "| --- | --- |" + " --- |" * len(results)]
    for family, label in FAMILIES.items():
        for metric in _metrics_of(results, family):
            cells = [fmt(dig(r, "families", family, *metric.split("."))) for r in results]
            rows.append(f"| ({family}) {label} | {metric} | " + " | ".join(cells) + " |")
    return rows


def _metrics_of(results: list[Result], family: str) -> list[str]:
    names: list[str] = []
    for r in results:
        data = dig(r, "families", family) or {}
        for key, value in data.items():
            if isinstance(value, list):
                continue  # samples (misses), shown in the JSON only
            if isinstance(value, dict):
                names += [f"{key}.{k}" for k in value if f"{key}.{k}" not in names]
            elif key not in names:
                names.append(key)
    return names


def _label(result: Result) -> str:
    return f"{result['corpus']['size']} / {_variant(result)}"


def latency_table(results: list[Result]) -> list[str]:
    rows = [
        "| run | call | phase | p50 ms | p95 ms | p99 ms |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        for call in ("recall", "remember"):
            for phase in ("total", "embed", "search", "rest"):
                s = dig(r, "latency", call, phase) or {}
                rows.append(
                    f"| {_label(r)} | {call} | {phase} | {fmt(s.get('p50_ms'))} | "
                    f"{fmt(s.get('p95_ms'))} | {fmt(s.get('p99_ms'))} |"
                )
            rows.append(
                f"| {_label(r)} | {call} | FT.SEARCH calls per call (mean) | "
                f"{fmt(dig(r, 'latency', call, 'search_calls_mean'), 1)} | | |"
            )
        for where, path in (
            ("MCP/HTTP", ("mcp",)),
            ("MCP/HTTP, server in the client's process", ("mcp", "same_process")),
        ):
            for call in ("recall", "remember"):
                s = dig(r, *path, call)
                if s:
                    rows.append(
                        f"| {_label(r)} | {call} via {where} | total | {fmt(s.get('p50_ms'))} | "
                        f"{fmt(s.get('p95_ms'))} | {fmt(s.get('p99_ms'))} |"
                    )
        for phase, label in (
            ("engine", "the same recall through the engine, just before"),
            ("added_by_mcp", "added by MCP/HTTP through fastmcp's Client (per query, paired)"),
            ("added_by_mcp_sdk", "added by MCP/HTTP through the SDK's ClientSession"),
            ("added_by_mcp_bare_post", "added by MCP/HTTP, bare JSON-RPC POST (no client library)"),
            ("bare_endpoint", "the same recall via a bare Starlette endpoint, same query"),
            ("added_by_bare_endpoint", "added by the bare endpoint (per query, paired)"),
            ("mcp_minus_bare_endpoint", "MCP/HTTP (fastmcp's Client) minus the bare endpoint"),
            (
                "mcp_sdk_minus_bare_endpoint",
                "MCP/HTTP (the SDK's ClientSession) minus the bare endpoint",
            ),
            ("mcp_bare_post_minus_bare_endpoint", "MCP/HTTP (bare POST) minus the bare endpoint"),
        ):
            s = dig(r, "mcp", "recall_paired", phase)
            if s:
                rows.append(
                    f"| {_label(r)} | recall via MCP/HTTP | {label} | {fmt(s.get('p50_ms'))} | "
                    f"{fmt(s.get('p95_ms'))} | {fmt(s.get('p99_ms'))} |"
                )
    return rows


def resource_table(results: list[Result]) -> list[str]:
    rows = [
        "| run | import memories/s | bytes/memory (all) | of which hash | of which audit | "
        "valkey RSS MB | server process RSS MB | torch loaded | recalls/s 1 client | recalls/s 8 "
        "clients | load avg | CPU steal % |",
        "| --- |" + " --- |" * 11,
    ]
    for r in results:
        rows.append(
            " | ".join(
                [
                    f"| {_label(r)}",
                    fmt(dig(r, "import", "memories_per_second"), 0),
                    fmt(dig(r, "import", "bytes_per_memory"), 0),
                    fmt(dig(r, "import", "breakdown", "hash_bytes"), 0),
                    fmt(dig(r, "import", "breakdown", "audit_bytes"), 0),
                    fmt(dig(r, "memory", "valkey_rss_mb"), 0),
                    fmt(dig(r, "memory", "server_probe", "rss_mb"), 0),
                    fmt(dig(r, "memory", "server_probe", "torch_imported")),
                    fmt(dig(r, "throughput", "1_clients", "recalls_per_second"), 0),
                    fmt(dig(r, "throughput", "8_clients", "recalls_per_second"), 0),
                    fmt(dig(r, "machine", "load_average")),
                    fmt(dig(r, "machine", "cpu_steal_percent"), 1),
                ]
            )
            + " |"
        )
    return rows


def sweep_table(results: list[Result]) -> list[str]:
    """Per relevance floor: vector-only paraphrase recall@5 / no-answer abstention."""
    floors = [
        row["floor"]
        for row in dig(results[-1], "diagnostics", "paraphrase_floor_sweep", "sweep") or []
    ]
    rows = [
        "| run | " + " | ".join(f"floor {f:.2f}" for f in floors) + " |",
        "| --- |" + " --- |" * len(floors),
    ]
    for r in results:
        sweep = dig(r, "diagnostics", "paraphrase_floor_sweep", "sweep") or []
        rows.append(
            f"| {_label(r)} | "
            + " | ".join(f"{fmt(x['recall@5'])} / {fmt(x['abstention'])}" for x in sweep)
            + " |"
        )
    return rows


def commands_table(results: list[Result]) -> list[str]:
    rows = ["| run | Valkey commands per recall |", "| --- | --- |"]
    for r in results:
        per = {
            k: v
            for k, v in (dig(r, "diagnostics", "valkey_commands_per_recall") or {}).items()
            if k != "info"
        }
        if not per:
            rows.append(f"| {_label(r)} | not measured in this run |")
            continue
        busiest = sorted(per.items(), key=lambda kv: -kv[1])
        rows.append(
            f"| {_label(r)} | {sum(per.values()):.1f} in all: "
            + ", ".join(f"{name} {count:.1f}" for name, count in busiest)
            + " |"
        )
    return rows


def chart(results: list[Result], path: Path) -> Path | None:
    """Latency vs corpus size (log x), one line per backend (and search engine) and percentile;
    None without matplotlib (the `bench` extra: pip install -e '.[bench]'; the
    test suite never needs it)."""
    import importlib

    try:
        importlib.import_module("matplotlib").use("Agg")
        plt: Any = importlib.import_module("matplotlib.pyplot")
    except ImportError:
        print("matplotlib is not installed (pip install -e '.[bench]'): no chart", flush=True)
        return None

    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    plain = [r for r in results if not r.get("valkey_config")]
    # one line per embedder backend and search engine
    for backend in sorted({_variant(r) for r in plain}):
        runs = sorted(
            (r for r in plain if _variant(r) == backend),
            key=lambda r: SIZE_ORDER[r["corpus"]["size"]],
        )
        sizes = [SIZE_ORDER[r["corpus"]["size"]] for r in runs]
        for call, phase, pct, style in (
            ("recall", "total", "p50_ms", "o-"),
            ("recall", "total", "p95_ms", "o--"),
            ("remember", "total", "p50_ms", "s:"),
        ):
            values = [dig(r, "latency", call, phase, pct) for r in runs]
            ax.plot(sizes, values, style, label=f"{call} {pct[:3]} ({backend})")
    ax.axhline(8, color="grey", linewidth=0.8, linestyle="-.", label="recall p50 target (8 ms)")
    ax.axhline(20, color="grey", linewidth=0.8, linestyle=":", label="recall p95 target (20 ms)")
    ax.set_xscale("log")
    ax.set_xlabel("memories in the store")
    ax.set_ylabel("milliseconds")
    ax.set_title("Kenning latency through the engine vs corpus size")
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def write(folder: Path, page: Path = PAGE, chart_path: Path = CHART) -> list[Path]:
    results = load(folder)
    if not results:
        return []
    ordered = sorted(
        results.values(), key=lambda r: (SIZE_ORDER.get(r["corpus"]["size"], 0), _variant(r))
    )
    main = primary(results)
    assert main is not None
    drawn = chart(ordered, chart_path)
    from bench.page import render

    resources = [
        *resource_table(ordered),
        "",
        "### Relevance floor sweep (diagnostic)",
        "",
        "Each cell: paraphrase recall@5 on the raw vector ranking / no-answer abstention, if "
        "recall used that floor (the default is 0.25).",
        "",
        *sweep_table(ordered),
        "",
        "### Valkey round trips per recall (diagnostic)",
        "",
        *commands_table(ordered),
    ]
    scaled = sorted(
        load(folder, scale_points=True).values(),
        key=lambda r: (SIZE_ORDER.get(r["corpus"]["size"], 0), _variant(r)),
    )
    page.write_text(
        render(
            main,
            ordered,
            targets_table(main, ordered),
            family_table(ordered),
            latency_table(ordered),
            resources,
            chart_path.name,
            ratios=ratio_table([*ordered, *scaled]),
            load=_load_section(folder, chart_path),
        ),
        encoding="utf-8",
    )
    return [page, drawn] if drawn else [page]


def _load_section(folder: Path, chart_path: Path) -> list[str]:
    """The load runs' section (bench/load.py), from ``folder/load``."""
    from bench import load

    return load.page_section(folder / "load", chart_path.with_name(load.LOAD_CHART.name))


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.report [RESULTS]``: the page and the chart again
    from the results (no run)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m bench.report", description=main.__doc__)
    parser.add_argument(
        "results",
        nargs="?",
        type=Path,
        default=ROOT / "bench" / "results",
        help="folder of result JSON files (default bench/results)",
    )
    args = parser.parse_args(argv)
    written = write(args.results)
    if not written:
        parser.error(f"no result files in {args.results}: run `kenning bench` first")
    print("wrote " + ", ".join(str(path) for path in written))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
