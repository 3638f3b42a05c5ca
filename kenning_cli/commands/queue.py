"""`kenning queue status|run|parked|requeue|drop`: the LLM enrichment queue (docs/llm.md)."""

from __future__ import annotations

import argparse
import json
import os
import socket
from dataclasses import asdict

from kenning.core.errors import KenningError
from kenning.core.settings import Settings
from kenning_cli.registry import command

ACTOR = "cli"


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "action",
        choices=("status", "run", "parked", "requeue", "drop"),
        help=(
            "status: queued, in flight, delayed, parked jobs and today's spend; run: drain once "
            "now; parked: the parked jobs with their errors; requeue / drop: a parked job (by id) "
            "back into the queue, or deleted"
        ),
    )
    parser.add_argument("ids", nargs="*", help="requeue / drop: the parked jobs' ids")
    parser.add_argument("--all", action="store_true", help="requeue / drop: every parked job")
    parser.add_argument("--limit", type=int, default=50, help="run: at most this many jobs")


@command(
    "queue",
    "The LLM enrichment queue: status, run (drain once), parked, requeue or drop a parked job.",
    _arguments,
)
def _queue(args: argparse.Namespace, settings: Settings) -> int:
    from kenning_cli.services import open_engine

    if args.action in ("requeue", "drop") and bool(args.ids) == bool(args.all):
        print(f"kenning queue {args.action}: give the parked jobs' ids or --all", flush=True)
        return 2
    if args.limit < 1 or args.limit > 10_000:
        print("kenning queue run: --limit must be between 1 and 10000", flush=True)
        return 2
    engine = open_engine(settings)
    enrichment = engine.enrichment
    if args.action == "status":
        print(json.dumps(enrichment.status().public(), indent=2, sort_keys=True))
        return 0
    if args.action == "parked":
        jobs = [asdict(job) for job in enrichment.parked(limit=10_000)]
        print(json.dumps(jobs, indent=2, sort_keys=True))
        return 0
    if args.action == "run":
        consumer = f"cli:{socket.gethostname()}:{os.getpid()}"
        report = enrichment.drain(consumer, limit=args.limit)
        print(json.dumps(report.public(), indent=2, sort_keys=True), flush=True)
        return 0
    ids = [job.id for job in enrichment.parked(limit=10_000)] if args.all else args.ids
    failed = 0
    for parked_id in ids:
        try:
            if args.action == "requeue":
                print(f"requeued {parked_id} as {enrichment.requeue(parked_id, actor=ACTOR)}")
            else:
                enrichment.drop(parked_id, actor=ACTOR)
                print(f"dropped {parked_id}")
        except KenningError as exc:
            print(f"{parked_id}: {exc}", flush=True)
            failed += 1
    return 1 if failed else 0
