"""`kenning bench`: run the benchmark harness (bench/) and write its JSON and docs/benchmarks.md."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kenning.core.settings import Settings
from kenning_cli.registry import command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--size",
        choices=("1k", "10k", "100k", "250k", "500k", "1m"),
        default="10k",
        help=(
            "corpus size (default 10k); 250k-1m are scale points with precomputed vectors "
            "(docs/benchmarks.md)"
        ),
    )
    parser.add_argument("--seed", type=int, default=7, help="corpus and query seed (default 7)")
    parser.add_argument(
        "--out", type=Path, default=None, help="results folder (default bench/results)"
    )
    parser.add_argument(
        "--queries", type=int, default=200, help="queries per retrieval family (default 200)"
    )
    parser.add_argument(
        "--no-docs", action="store_true", help="write the JSON only, not docs/benchmarks.md"
    )
    parser.add_argument(
        "--valkey-config",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="experiment: CONFIG SET this on the private Valkey before the import (repeatable)",
    )
    _llm_arguments(parser)
    _load_arguments(parser)
    parser.add_argument(
        "--cluster",
        action="store_true",
        help=(
            "instead: one valkey-search server beside a local 3-shard cluster, same corpus "
            "(load, bytes per memory, recall p50/p95, bare KNN, recall@10); writes "
            "bench/results/cluster/ (docs/cluster.md)"
        ),
    )


def _llm_arguments(parser: argparse.ArgumentParser) -> None:
    """`--llm`: the LLM extras' mechanics against a scripted local model server."""
    parser.add_argument(
        "--llm",
        action="store_true",
        help=(
            "instead: the LLM extras' mechanics against a scripted local model server "
            "(expansion latency cold/cached, enrichment queue jobs/s); writes bench/results/llm/"
        ),
    )
    parser.add_argument(
        "--model-ms",
        type=float,
        default=0.0,
        help="with --llm: how long the scripted model takes per answer (default 0)",
    )


def _load_arguments(parser: argparse.ArgumentParser) -> None:
    """`--load`: N concurrent MCP clients over HTTP (bench/load.py)."""
    parser.add_argument(
        "--load",
        action="store_true",
        help=(
            "instead: N concurrent MCP clients against `kenning mcp` over HTTP, with the "
            "embedding's own ceiling beside each N (bench/load.py); writes bench/results/load/"
        ),
    )
    parser.add_argument(
        "--clients", default="1,4,16,64", help="with --load: client counts (default 1,4,16,64)"
    )
    parser.add_argument(
        "--seconds", type=float, default=20.0, help="with --load: seconds per N (default 20)"
    )
    parser.add_argument(
        "--mix",
        default="70/10/15/5",
        help="with --load: weights of recall/recall_index/remember/briefing (default 70/10/15/5)",
    )
    parser.add_argument(
        "--pause",
        default="exp:10",
        help=(
            "with --load: pause between a client's calls: none, fixed:MS, exp:MEAN_MS, "
            "uniform:LO:HI, lognormal:MEDIAN_MS:SIGMA (default exp:10)"
        ),
    )
    parser.add_argument(
        "--memories", type=int, default=2000, help="with --load: memories stored (default 2000)"
    )
    parser.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME:KEY=VALUE,...",
        help=(
            "with --load: another server environment, run interleaved with the others per N "
            "(repeatable; the first is the headline; none given: the default server)"
        ),
    )


@command(
    "bench",
    "Benchmark retrieval quality, latency and memory on a private embedded Valkey.",
    _arguments,
)
def _bench(args: argparse.Namespace, settings: Settings) -> int:
    if args.llm:
        from bench import llm

        return llm.run(
            settings, queries=min(args.queries, 500), model_ms=args.model_ms, out=args.out
        )
    if args.load:
        return _load(args, settings)
    if args.cluster:
        from bench import cluster

        return cluster.run(
            settings, size=args.size, seed=args.seed, queries=args.queries, out=args.out
        )
    from bench import main

    pairs = tuple(tuple(item.split("=", 1)) for item in args.valkey_config)
    if any(len(pair) != 2 for pair in pairs):
        print("--valkey-config takes NAME=VALUE", file=sys.stderr)
        return 2
    return main.run(
        settings,
        size=args.size,
        seed=args.seed,
        out=args.out,
        queries=args.queries,
        docs=not args.no_docs,
        valkey_config=pairs,
    )


def _load(args: argparse.Namespace, settings: Settings) -> int:
    from bench import load

    try:
        variants = tuple(_variant(text) for text in args.variant) or (("default", ()),)
        config = load.LoadConfig(
            clients=tuple(int(n) for n in args.clients.split(",")),
            seconds=args.seconds,
            mix=load.parse_mix(args.mix),
            pause=args.pause,
            memories=args.memories,
            seed=args.seed,
            variants=variants,
        )
        load.pauser(config.pause, __import__("random").Random(0))
    except ValueError as exc:
        print(f"kenning bench --load: {exc}", file=sys.stderr)
        return 2
    from bench import main

    return main.run_load(settings, config, out=args.out, docs=not args.no_docs)


def _variant(text: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """``NAME:KEY=VALUE,KEY=VALUE`` -> (name, pairs); a ValueError when malformed."""
    name, _, rest = text.partition(":")
    pairs = tuple(tuple(p.split("=", 1)) for p in rest.split(",") if p)
    if not name or any(len(p) != 2 for p in pairs):
        raise ValueError(f"--variant {text!r}: NAME:KEY=VALUE,KEY=VALUE")
    return name, tuple((k, v) for k, v in pairs)
