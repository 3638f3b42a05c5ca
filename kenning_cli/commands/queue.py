"""`kenning queue status|run`: the LLM enrichment queue (docs/llm.md)."""

from __future__ import annotations

import argparse
import json
import os
import socket

from kenning.core.settings import Settings
from kenning_cli.registry import command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=("status", "run"),
        help="status: queued, in flight, parked jobs and today's spend; run: drain once now",
    )
    parser.add_argument("--limit", type=int, default=50, help="run: at most this many jobs")


@command(
    "queue",
    "The LLM enrichment queue: status (queued, in flight, parked, spend) or run (drain once).",
    _arguments,
)
def _queue(args: argparse.Namespace, settings: Settings) -> int:
    from kenning_cli.services import open_engine

    engine = open_engine(settings)
    if args.action == "status":
        print(json.dumps(engine.enrichment.status().public(), indent=2, sort_keys=True))
        return 0
    if args.limit < 1 or args.limit > 10_000:
        print("kenning queue run: --limit must be between 1 and 10000", flush=True)
        return 2
    report = engine.enrichment.drain(f"cli:{socket.gethostname()}:{os.getpid()}", limit=args.limit)
    print(json.dumps(report.public(), indent=2, sort_keys=True), flush=True)
    return 0
