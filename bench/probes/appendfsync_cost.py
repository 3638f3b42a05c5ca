"""Measure what `appendfsync always` costs a remember, against the default `everysec`
(docs/reliability.md). Two embedded Valkeys (one per policy) on the same disk, one model, the
remembers interleaved so the box's drift hits both alike.

    PYTHONPATH=. python -m bench.probes.appendfsync_cost --n 200
"""

from __future__ import annotations

import argparse
import socket
import statistics
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

from kenning.core.clock import SystemClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import load_embedder
from kenning.store import connect


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument(
        "--dir", type=Path, default=None, help="data dir parent (default: a temp dir)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp, ExitStack() as stack:
        engines: dict[str, Engine] = {}
        embedder = None
        for policy in ("everysec", "always"):
            settings = Settings(
                _env_file=None,
                data_dir=Path(tmp) / policy,
                valkey_port=free_port(),
                valkey_appendfsync=policy,
                key_prefix="measure:",
            )
            stack.enter_context(EmbeddedValkey(settings))
            embedder = embedder or load_embedder(settings)
            engines[policy] = Engine.open(
                settings, connect(settings), embedder, clock=SystemClock()
            )
        times: dict[str, list[float]] = {policy: [] for policy in engines}
        for i in range(args.n):
            for policy, engine in engines.items():
                start = time.perf_counter()
                engine.memories.remember(
                    Draft(f"measurement note number {i} about build {i * 7}"), actor="m"
                )
                times[policy].append((time.perf_counter() - start) * 1000)
        for policy, values in times.items():
            values.sort()
            print(
                f"{policy}: remember p50 {statistics.median(values):.2f} ms, "
                f"p95 {values[int(len(values) * 0.95)]:.2f} ms over {len(values)}"
            )
        ratio = statistics.median(times["always"]) / statistics.median(times["everysec"])
        print(f"always / everysec p50: {ratio:.2f}x")


if __name__ == "__main__":
    main()
