"""`kenning worker`: the worker alone, in the foreground, against a running Valkey (docs/worker.md)."""

from __future__ import annotations

import argparse

from kenning.cli import command, wait_for_signal
from kenning.settings import Settings


@command("worker", "Run the worker alone in the foreground: scheduled maintenance under a leader lock "
                   "(Valkey must be running).")
def _worker(args: argparse.Namespace, settings: Settings) -> int:
    from feed_worker.worker import Worker
    from kenning.services import open_engine

    worker = Worker(open_engine(settings), settings)
    worker.start()
    print(f"worker {worker.id} running: {worker.describe()}; Ctrl-C stops it", flush=True)
    try:
        wait_for_signal(worker.alive)
    finally:
        worker.stop()
    return 0
