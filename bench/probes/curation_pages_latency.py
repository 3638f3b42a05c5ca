"""Median and p90 latency of the dashboard's curation pages, in process (ASGI test client), over a
real Valkey with the search module and the real model, with N memories (a tenth verified), one skill
proposal
and the three role accounts. A look, not a benchmark: bench/ measures speed.

    .venv/bin/python -m bench.probes.curation_pages_latency [N] [path/to/search-module.so]
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from kenning.core.clock import ManualClock
from kenning.engine import Engine
from kenning.memory.bulk import Bulk
from kenning.memory.memories import Draft
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import load_embedder
from kenning.store import connect
from tests.conftest import free_port, make_settings
from tests.kenning.skill_history import DOMAIN, seed
from tests.web_ui.conftest import Dashboard, make_accounts, web_settings

PAGES = (
    "/skills",
    "/feeds",
    "/accounts",
    "/memories?trust=verified",
    "/memories?source=memory&trust=stated",
    "/duplicates",
)
ROUNDS = 20


def main(n: int, module: str | None) -> None:
    tmp = Path(tempfile.mkdtemp(prefix="kenning-curation-"))
    settings = make_settings(
        tmp, free_port(), **({"search_module": Path(module)} if module else {})
    )
    with EmbeddedValkey(settings):
        engine = Engine.open(
            settings, connect(settings), load_embedder(settings), clock=ManualClock(1_790_000_000.0)
        )
        make_accounts(engine)
        seed(engine)
        engine.skills.compile_skill(DOMAIN, actor="agent")
        drafts = [
            Draft(
                content=f"Service {i} listens on port {8000 + i} in region {i % 7}",
                project=f"p{i % 5}",
            )
            for i in range(n)
        ]
        stored = [
            r.key
            for r in Bulk(engine.ctx, engine.memories).remember_many(drafts, actor="bench")
            if r.status == "stored"
        ]
        for key in stored[::10]:
            engine.belief.verify(key, "measured", actor="bench")
        print(f"{len(stored)} memories stored; search module {module or 'default'}")
        web = Dashboard(engine, web_settings(settings, tmp))
        admin = web.client("admin")
        for path in PAGES:
            assert admin.get(path).status_code == 200, path
            times = []
            for _ in range(ROUNDS):
                started = time.perf_counter()
                admin.get(path)
                times.append((time.perf_counter() - started) * 1000)
            times.sort()
            print(
                f"{path:42s} median {statistics.median(times):7.1f} ms  "
                f"p90 {times[int(ROUNDS * 0.9) - 1]:7.1f} ms"
            )
        for client in web.clients:
            client.close()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500, sys.argv[2] if len(sys.argv) > 2 else None)
