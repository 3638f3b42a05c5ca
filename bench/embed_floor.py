"""The query embedding as agents see it (issue 38): ``python -m bench.embed_floor``.

The same short query, interleaved round by round so the box's drift lands on every case alike:

- ``hot``: back to back on the calling thread;
- ``sleep_10ms`` / ``sleep_200ms``: after the thread slept that long (the CPU may idle, other
  processes take it, caches and branch predictors cool);
- ``spin_200ms``: after 200 ms of busy-waiting in Python on the same thread (the CPU stays busy:
  what is left is cache state, not idle states or the scheduler);
- ``fresh_thread``: on a new thread each time (``threading.Thread``);
- ``pool_hop``: handed to a kept ``ThreadPoolExecutor`` worker after a 200 ms pause (what
  ``anyio.to_thread`` does for a tool call);
- ``through_queue_200ms``: through ``BatchingEmbedder`` after a 200 ms pause (the serving path).

Each is measured with ONNX Runtime's intra-op spinning on and off (``--sessions``); with one
intra-op thread there is no intra-op pool to spin, so the two should match. Prints p50/p95 per
case; ``measure`` returns them for ``bench.load`` too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench import metrics
from kenning.runtime.embedding import BatchingEmbedder, Embedder

QUERY = "How do I rotate the signing key of the billing service?"


def measure(embedder: Embedder, rounds: int = 20, text: str = QUERY) -> dict[str, Any]:
    """p50/p95 (ms) of one embed per case, the cases interleaved per round."""
    raw: Embedder = getattr(embedder, "inner", embedder)
    queue = BatchingEmbedder(raw, runs=1, max_batch=32, bound=64)
    pool = ThreadPoolExecutor(1)
    pool.submit(raw.embed, text).result()

    def timed(call: Callable[[], object]) -> float:
        start = time.perf_counter()
        call()
        return time.perf_counter() - start

    def after_sleep(seconds: float) -> float:
        time.sleep(seconds)
        return timed(lambda: raw.embed(text))

    def after_spin(seconds: float) -> float:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass
        return timed(lambda: raw.embed(text))

    def fresh_thread() -> float:
        out: list[float] = []
        thread = threading.Thread(target=lambda: out.append(timed(lambda: raw.embed(text))))
        time.sleep(0.2)
        thread.start()
        thread.join()
        return out[0]

    def pool_hop() -> float:
        time.sleep(0.2)
        return pool.submit(timed, lambda: raw.embed(text)).result()

    def through_queue() -> float:
        time.sleep(0.2)
        return timed(lambda: queue.embed(text))

    def hot() -> float:
        raw.embed(text)
        return timed(lambda: raw.embed(text))

    cases: dict[str, Callable[[], float]] = {
        "hot": hot,
        "sleep_10ms": lambda: after_sleep(0.01),
        "sleep_200ms": lambda: after_sleep(0.2),
        "spin_200ms": lambda: after_spin(0.2),
        "fresh_thread": fresh_thread,
        "pool_hop": pool_hop,
        "through_queue_200ms": through_queue,
    }
    samples: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(rounds):
        for name, case in cases.items():
            samples[name].append(case())
    pool.shutdown()
    out = {name: metrics.latency_summary(values) for name, values in samples.items()}
    hot_p50 = out["hot"]["p50_ms"]
    for entry in out.values():
        entry["over_hot"] = entry["p50_ms"] / hot_p50 if hot_p50 else float("nan")
    return out


def _session(spinning: bool) -> Embedder:
    """The configured int8 model with ONNX Runtime's intra-op spinning set (an experiment: the
    serving path keeps ONNX Runtime's default)."""
    from kenning.core.settings import Settings
    from kenning.runtime.embedding import OnnxEmbedder, default_model_path, ensure_int8, ensure_onnx

    model = default_model_path()
    onnx_file = ensure_int8(ensure_onnx(model, Settings().resolved_model_dir))
    return OnnxEmbedder(model, onnx_file, quantized=True, spinning=spinning)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.embed_floor", description=__doc__)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)
    result: dict[str, Any] = {"load_average": [round(x, 2) for x in os.getloadavg()]}
    for spinning in (True, False):
        result[f"spinning_{'on' if spinning else 'off'}"] = measure(_session(spinning), args.rounds)
    result["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(result, indent=2))
    for label in ("spinning_on", "spinning_off"):
        print(f"\n{label}: case p50 ms / p95 ms / p50 over hot")
        for name, entry in result[label].items():
            print(
                f"  {name:22s} {entry['p50_ms']:7.2f} {entry['p95_ms']:7.2f} "
                f"{entry['over_hot']:5.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
