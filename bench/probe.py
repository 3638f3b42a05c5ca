"""The server-process probe: load the embedder and the engine as `kenning up` does, serve some recalls,
print the resident memory as one JSON line. Run by the harness as ``python -m bench.probe N`` with the
bench's KENNING_* environment (its private Valkey)."""

from __future__ import annotations

import json
import sys
import time

from bench.system import rss_mb
from kenning.recall import RecallRequest
from kenning.services import open_engine
from kenning.settings import load_settings


def main(recalls: int) -> int:
    start = time.perf_counter()
    settings = load_settings()
    engine = open_engine(settings)
    loaded = time.perf_counter() - start
    for n in range(recalls):
        engine.recaller.recall(RecallRequest(f"how do we deploy the service, attempt {n}?", top_k=10))
    print(json.dumps({"rss_mb": rss_mb(), "startup_seconds": loaded, "backend": settings.embedding_backend,
                      "torch_imported": "torch" in sys.modules}))
    return 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 30))
