"""The server-process probe: start what `kenning up` runs in its process -- the embedder, the
engine, the MCP server and the worker -- serve some recalls, and print the resident memory as one
JSON line. Run by the harness as ``python -m bench.probe N`` with the bench's KENNING_*
environment (its private Valkey)."""

from __future__ import annotations

import json
import sys
import time

from bench.system import rss_mb
from kenning.core.settings import load_settings
from kenning.memory.recall import RecallRequest
from kenning_cli.services import front_doors, instrumented_embedder, open_engine


def main(recalls: int) -> int:
    start = time.perf_counter()
    settings = load_settings()
    metrics, embedder = instrumented_embedder(settings)  # as `kenning up` loads it
    engine = open_engine(settings, embedder)
    services = front_doors(engine, settings, mcp=True, worker=True, metrics=metrics)
    for service in services:
        service.start()
    try:
        loaded = time.perf_counter() - start
        for n in range(recalls):
            engine.recaller.recall(
                RecallRequest(f"how do we deploy the service, attempt {n}?", top_k=10)
            )
        print(
            json.dumps(
                {
                    "rss_mb": rss_mb(),
                    "startup_seconds": loaded,
                    "backend": embedder.model_name,
                    "services": [s.name for s in services],
                    "torch_imported": "torch" in sys.modules,
                }
            )
        )
    finally:
        for service in reversed(services):
            service.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 30))
