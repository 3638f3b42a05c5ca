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

Each case is split into its steps -- ``tokenize`` (``OnnxEmbedder.feeds``), ``run`` (ONNX
Runtime) and ``pool`` (numpy mean pool and normalise) -- except through the queue, whose steps
run on the queue's thread. ``main`` runs the serving session beside variants (``VARIANTS``: the
tokenizer's ``encode_batch`` for one text, ONNX Runtime's intra-op spinning off, its memory arena
or memory pattern off), the variants interleaved too, so each is read against the default
measured in the same minutes. ``measure`` returns one embedder's cases (``bench.load``).
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
from kenning.runtime.embedding import BatchingEmbedder, Embedder, OnnxEmbedder, Vector, pooled

QUERY = "How do I rotate the signing key of the billing service?"
STEPS = ("tokenize", "run", "pool")
# name -> (the tokenizer's encode_batch for one text, a SessionOptions change)
VARIANTS: dict[str, tuple[bool, Callable[[Any], None] | None]] = {
    "default": (False, None),
    "encode_batch": (True, None),
    "spinning_off": (
        False,
        lambda o: o.add_session_config_entry("session.intra_op.allow_spinning", "0"),
    ),
    "no_arena": (False, lambda o: setattr(o, "enable_cpu_mem_arena", False)),
    "no_mem_pattern": (False, lambda o: setattr(o, "enable_mem_pattern", False)),
}
Sample = tuple[float, ...]  # total seconds, then each of STEPS when they were timed


class Staged:
    """An embedder whose one-text embed times its steps (``OnnxEmbedder``; any other embedder is
    timed whole). ``batch``: tokenize one text with ``encode_batch``."""

    def __init__(self, embedder: Embedder, *, batch: bool = False) -> None:
        raw: Embedder = getattr(embedder, "inner", embedder)
        self.raw = raw
        self.onnx = raw if isinstance(raw, OnnxEmbedder) else None
        self.batch = batch
        self.model_name = raw.model_name
        self.dimension = raw.dimension

    def timed(self, text: str) -> Sample:
        start = time.perf_counter()
        if self.onnx is None:
            self.raw.embed(text)
            return (time.perf_counter() - start,)
        feeds = self.onnx.feeds([text], batch=self.batch)
        tokenized = time.perf_counter()
        hidden = self.onnx.run(feeds)
        ran = time.perf_counter()
        pooled(hidden, feeds["attention_mask"])
        end = time.perf_counter()
        return (end - start, tokenized - start, ran - tokenized, end - ran)

    def embed(self, text: str) -> Vector:
        if self.onnx is None:
            return self.raw.embed(text)
        feeds = self.onnx.feeds([text], batch=self.batch)
        return pooled(self.onnx.run(feeds), feeds["attention_mask"])[0]

    def embed_many(self, texts: list[str]) -> list[Vector]:
        return [self.embed(text) for text in texts]


def _cases(staged: Staged, text: str) -> tuple[dict[str, Callable[[], Sample]], Callable[[], None]]:
    """The cases of one embedder, and what closes their pool and queue."""
    queue = BatchingEmbedder(staged, runs=1, max_batch=32, bound=64)
    pool = ThreadPoolExecutor(1)
    pool.submit(staged.timed, text).result()

    def after_sleep(seconds: float) -> Sample:
        time.sleep(seconds)
        return staged.timed(text)

    def after_spin(seconds: float) -> Sample:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass
        return staged.timed(text)

    def fresh_thread() -> Sample:
        out: list[Sample] = []
        thread = threading.Thread(target=lambda: out.append(staged.timed(text)))
        time.sleep(0.2)
        thread.start()
        thread.join()
        return out[0]

    def pool_hop() -> Sample:
        time.sleep(0.2)
        return pool.submit(staged.timed, text).result()

    def through_queue() -> Sample:
        time.sleep(0.2)
        start = time.perf_counter()
        queue.embed(text)
        return (time.perf_counter() - start,)

    def hot() -> Sample:
        staged.timed(text)
        return staged.timed(text)

    cases: dict[str, Callable[[], Sample]] = {
        "hot": hot,
        "sleep_10ms": lambda: after_sleep(0.01),
        "sleep_200ms": lambda: after_sleep(0.2),
        "spin_200ms": lambda: after_spin(0.2),
        "fresh_thread": fresh_thread,
        "pool_hop": pool_hop,
        "through_queue_200ms": through_queue,
    }
    return cases, pool.shutdown


def compare(
    embedders: dict[str, Staged], rounds: int = 20, text: str = QUERY
) -> dict[str, dict[str, Any]]:
    """Per embedder and case: p50/p95 (ms) of the whole embed, the p50 of each step and the p50
    over that embedder's hot one; embedders and cases interleaved per round."""
    built = {name: _cases(staged, text) for name, staged in embedders.items()}
    samples: dict[str, dict[str, list[Sample]]] = {
        name: {case: [] for case in cases} for name, (cases, _) in built.items()
    }
    for _ in range(rounds):
        for name, (cases, _) in built.items():
            for case, run in cases.items():
                samples[name][case].append(run())
    for _, close in built.values():
        close()
    return {name: _summary(by_case) for name, by_case in samples.items()}


def _summary(by_case: dict[str, list[Sample]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for case, values in by_case.items():
        entry: dict[str, Any] = metrics.latency_summary([v[0] for v in values])
        if all(len(v) == 1 + len(STEPS) for v in values):
            for i, step in enumerate(STEPS, start=1):
                entry[f"{step}_p50_ms"] = metrics.percentile([1000 * v[i] for v in values], 50)
        out[case] = entry
    hot_p50 = out["hot"]["p50_ms"]
    for entry in out.values():
        entry["over_hot"] = entry["p50_ms"] / hot_p50 if hot_p50 else float("nan")
    return out


def measure(embedder: Embedder, rounds: int = 20, text: str = QUERY) -> dict[str, Any]:
    """p50/p95 (ms) of one embed per case (and its steps), the cases interleaved per round."""
    return compare({"default": Staged(embedder)}, rounds, text)["default"]


def _session(configure: Callable[[Any], None] | None) -> OnnxEmbedder:
    """The configured int8 model, its session options changed by ``configure``."""
    from kenning.core.settings import Settings
    from kenning.runtime.embedding import default_model_path, ensure_int8, ensure_onnx

    model = default_model_path()
    onnx_file = ensure_int8(ensure_onnx(model, Settings().resolved_model_dir))
    return OnnxEmbedder(model, onnx_file, quantized=True, configure=configure)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.embed_floor", description=__doc__)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument(
        "--variant", action="append", choices=sorted(VARIANTS), help="default: all of them"
    )
    args = parser.parse_args(argv)
    names = args.variant or list(VARIANTS)
    embedders = {
        name: Staged(_session(VARIANTS[name][1]), batch=VARIANTS[name][0]) for name in names
    }
    result: dict[str, Any] = {"load_average": [round(x, 2) for x in os.getloadavg()]}
    result.update(compare(embedders, args.rounds))
    result["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(result, indent=2))
    for name in names:
        print(f"\n{name}: case p50 / p95 ms, p50 over hot; p50 ms of tokenize / run / pool")
        for case, entry in result[name].items():
            steps = " / ".join(f"{entry.get(f'{s}_p50_ms', float('nan')):5.2f}" for s in STEPS)
            print(
                f"  {case:20s} {entry['p50_ms']:6.2f} {entry['p95_ms']:6.2f} "
                f"{entry['over_hot']:5.2f}   {steps}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
