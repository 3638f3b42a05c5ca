"""`kenning worker`: the worker alone, in the foreground, against a
running Valkey (docs/worker.md)."""

from __future__ import annotations

import argparse

from kenning.core.settings import Settings
from kenning_cli.registry import command


@command(
    "worker",
    "Run the worker alone in the foreground: scheduled maintenance and feed ingestion "
    "under a leader lock (Valkey must be running).",
)
def _worker(args: argparse.Namespace, settings: Settings) -> int:
    from feed_worker.worker import Worker
    from kenning_cli.services import open_engine, run_alone

    worker = Worker(open_engine(settings), settings)
    return run_alone(worker, f"worker {worker.id} running: {worker.describe()}")
