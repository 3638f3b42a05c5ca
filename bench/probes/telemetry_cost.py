"""Measure what the dashboard's telemetry and overview cost the store (docs/dashboard.md#telemetry):
N memories spread over 14 days and a full recall log (``recall_log_max_entries`` entries of 5
results),
then each engine call the pages make, 15 times, median and worst.

    PYTHONPATH=. python -m bench.probes.telemetry_cost --n 5000
    PYTHONPATH=. python -m bench.probes.telemetry_cost --n 5000 --module
    /work/shared/valkey-search/libsearch.so
"""

from __future__ import annotations

import argparse
import socket
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.bulk import Bulk
from kenning.memory.inspection import AuditRequest
from kenning.memory.memories import Draft
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import load_embedder
from kenning.store import connect
from kenning.store.registries import RecallLogStore
from web_ui.pages import overview, telemetry

DAY = 86_400
RUNS = 15


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def seed(engine: Engine, clock: ManualClock, n: int) -> None:
    bulk = Bulk(engine.ctx, engine.memories)
    for day in range(14):
        drafts = [
            Draft(
                content=(
                    f"Note {day}-{i}: service {i % 97} talks to queue {i % 13} on port {8000 + i}"
                ),
                namespace=("knowledge", "episodic", "preference")[i % 3],
                project=f"p{i % 5}",
            )
            for i in range(n // 14)
        ]
        bulk.remember_many(drafts, actor="measure")
        clock.advance(DAY)
    log = RecallLogStore(engine.store.client, engine.store.prefix)
    result = {
        "score": 0.5,
        "similarity": 0.6,
        "preview": "x" * 120,
        "factors": {
            "visibility": 1.0,
            "recency": 0.98,
            "experience": 1.0,
            "substance": 1.0,
            "temporal": 1.0,
        },
    }
    entry = {
        "query": "which queue does the billing service use?",
        "actor": "agent",
        "at": clock.now(),
        "projects": ["p1"],
        "results": [{"key": f"m:mem:knowledge:{i:026d}", **result} for i in range(5)],
    }
    pipe = engine.store.client.pipeline(transaction=False)
    for _ in range(engine.ctx.settings.recall_log_max_entries):
        log.queue_append(pipe, entry, engine.ctx.settings.recall_log_max_entries)
    pipe.execute()  # type: ignore[no-untyped-call]


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    took = []
    for _ in range(RUNS):
        started = time.perf_counter()
        fn()
        took.append((time.perf_counter() - started) * 1000)
    return statistics.median(took), max(took)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=5000)
    parser.add_argument(
        "--module", default=None, help="search module (default: the embedded RediSearch)"
    )
    args = parser.parse_args()
    values: dict[str, Any] = {
        "data_dir": Path(tempfile.mkdtemp()),
        "valkey_port": free_port(),
        "key_prefix": "m:",
    }
    if args.module:
        values["search_module"] = args.module
    settings = Settings(_env_file=None, **values)
    with EmbeddedValkey(settings):
        clock = ManualClock(1_790_000_000.0)
        engine = Engine.open(settings, connect(settings), load_embedder(settings), clock=clock)
        seed(engine, clock, args.n)
        t = engine.telemetry
        rows: dict[str, Callable[[], Any]] = {
            "overview gather (all of it)": lambda: overview.gather(engine),
            "  of which the counts and the newest memory": lambda: engine.inspection.audit(
                AuditRequest(limit=1)
            ),
            "memories_created(14): 70 FT counts": lambda: engine.activity.memories_created(14),
            "memories_created(90): 450 FT counts": lambda: engine.activity.memories_created(90),
            "telemetry gather: 3 lists + 3 day charts": lambda: telemetry.gather(
                engine, telemetry.Ask()
            ),
            "never_recalled, first 25": lambda: t.never_recalled(limit=25),
            "search_log, no match (the whole log)": lambda: t.search_log(text="nothing here"),
            "search_log by words, first 20": lambda: t.search_log(text="billing service"),
        }
        print(
            f"{args.module or 'embedded RediSearch'}: {args.n} memories, "
            f"{t.log.length()} log entries"
        )
        for name, fn in rows.items():
            median, worst = timed(fn)
            print(f"  {name:<44} median {median:7.1f} ms   worst {worst:7.1f} ms")


if __name__ == "__main__":
    main()
