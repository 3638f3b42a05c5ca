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
