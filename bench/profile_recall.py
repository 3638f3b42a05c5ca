"""Where an engine recall's time goes beyond embedding + one KNN (issue 21):
cProfile over paraphrase queries.

    PYTHONPATH=$PWD .venv/bin/python -m bench.profile_recall --size 10k --queries 300

Imports the bench corpus (its vectors cached as ``bench.shapes`` caches them) into a private Valkey,
runs each paraphrase query's recall once to warm up, then profiles the recalls and prints the
cumulative top functions and the per-call means (ms) of the recall's stages.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import random
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from bench import families
from bench.shapes import imported
from kenning.core.query import Search
from kenning.core.schema import vector_bytes
from kenning.engine import Engine
from kenning.memory.recall import RecallRequest
from kenning.store.client import call


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.profile_recall", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--size", default="10k")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--top", type=int, default=45)
    parser.add_argument(
        "--sync-lookup", action="store_true", help="experiment: the look-ups before the embedding"
    )
    parser.add_argument(
        "--switch-interval", type=float, default=None, help="experiment: sys.setswitchinterval"
    )
    parser.add_argument(
        "--ab-record",
        action="store_true",
        help="A/B only: the recall log written in the recall vs behind it, alternated per query",
    )
    args = parser.parse_args(argv)
    with imported(args.size, args.seed, "kenning-profile-") as (engine, client, corpus):
        queries = families.paraphrase_queries(
            corpus, random.Random(f"profile:{args.seed}"), args.queries
        )
        if args.ab_record:
            return ab_record(
                engine,
                [
                    RecallRequest(
                        q.text, projects=[q.project] if q.project else None, top_k=5, actor="bench"
                    )
                    for q in queries
                ],
            )
        if args.sync_lookup:
            engine.recaller._lookups = Immediate()  # type: ignore[assignment]
        if args.switch_interval:
            sys.setswitchinterval(args.switch_interval)
        requests = [
            RecallRequest(
                q.text, projects=[q.project] if q.project else None, top_k=5, actor="bench"
            )
            for q in queries
        ]
        for request in requests:  # warm-up
            engine.recaller.recall(request)
        client.config_resetstat()
        stages = timed_stages(engine, requests)
        server = {
            name: (int(v["calls"]), float(v["usec_per_call"]))
            for name, v in client.info("commandstats").items()
        }
        profile = cProfile.Profile()
        start = time.perf_counter()
        profile.enable()
        for request in requests:
            engine.recaller.recall(request)
        profile.disable()
        wall = time.perf_counter() - start
    out = io.StringIO()
    stats = pstats.Stats(profile, stream=out)
    stats.sort_stats("cumulative").print_stats(args.top)
    stats.sort_stats("tottime").print_stats(args.top)
    print(
        "stage p50 / mean ms without the profiler (recall = the whole "
        "call; embed, floor KNN alone):"
    )
    for name, samples in stages.items():
        print(
            f"  {name:22s} {1000 * statistics.median(samples):7.3f} "
            f"{1000 * statistics.fmean(samples):7.3f}"
        )
    print("Valkey time per command during the timed pass (calls, us per call):")
    for name, (calls, usec) in sorted(server.items(), key=lambda item: -item[1][0] * item[1][1]):
        print(f"  {name:28s} {calls:7d} {usec:9.1f}")
    print(f"{len(requests)} recalls, {1000 * wall / len(requests):.2f} ms each under the profiler")
    print(out.getvalue())
    return 0


STAGES = ("look_up", "pool", "unsuppressed", "rank", "collapse", "reinstate_candidates", "record")


def timed_stages(engine: Engine, requests: list[RecallRequest]) -> dict[str, list[float]]:
    """Per recall, the wall time of each stage (the recaller's methods wrapped on the instance),
    the rows' read inside ``pool``, and per query the floors: the embedding alone and one bare
    KNN 10 (and a PING: a round trip's fixed cost)."""
    samples: dict[str, list[float]] = {}
    recaller = engine.recaller
    memories = engine.ctx.store.memories
    wrapped = [(recaller, name) for name in STAGES] + [
        (memories, "_read_rows"),
        (engine.ctx.store, "log_recall"),
        (recaller.expander, "widen"),
        (recaller.graveyard, "warnings"),
    ]
    for owner, name in wrapped:
        setattr(owner, name, _timing(getattr(owner, name), samples.setdefault(name, [])))
    index = engine.ctx.index
    try:
        for request in requests:
            start = time.perf_counter()
            vector = vector_bytes(engine.ctx.embedder.embed(request.query))
            embedded = time.perf_counter()
            call(
                engine.ctx.store.client.execute_command,
                *Search(
                    index=index, knn=10, vector=vector, ef_runtime=64, return_fields=("distance",)
                ).args(),
            )
            searched = time.perf_counter()
            call(engine.ctx.store.client.ping)
            embed = engine.ctx.embedder.embed
            engine.ctx.embedder.embed = _timing(  # type: ignore[method-assign]
                embed, samples.setdefault("embed_in_recall", [])
            )
            pinged = time.perf_counter()
            recaller.recall(request)
            done = time.perf_counter()
            engine.ctx.embedder.embed = embed  # type: ignore[method-assign]
            for name, value in (
                ("embed", embedded - start),
                ("bare_knn", searched - embedded),
                ("ping", pinged - searched),
                ("recall", done - pinged),
            ):
                samples.setdefault(name, []).append(value)
    finally:
        for owner, name in wrapped:
            delattr(owner, name)
    return samples


def ab_record(engine: Engine, requests: list[RecallRequest]) -> int:
    """Each query recalled twice in a row, the order alternating: once with the recall log and
    counters written in the recall (the writer's queue set to 0), once written behind it.
    Prints p50 / mean of both."""
    writer = engine.ctx.store.recall_writes
    room = writer.capacity
    for request in requests:  # warm-up
        engine.recaller.recall(request)
    samples: dict[str, list[float]] = {"in the recall": [], "behind the reply": []}
    stages: dict[str, list[float]] = {}
    recaller = engine.recaller
    for i, request in enumerate(requests):
        for mode in (
            ("in the recall", "behind the reply")
            if i % 2
            else ("behind the reply", "in the recall")
        ):
            writer.capacity = 0 if mode == "in the recall" else room
            for name in ("record", "look_up"):
                setattr(
                    recaller,
                    name,
                    _timing(
                        getattr(type(recaller), name).__get__(recaller),
                        stages.setdefault(f"{mode}: {name}", []),
                    ),
                )
            start = time.perf_counter()
            recaller.recall(request)
            samples[mode].append(time.perf_counter() - start)
    for name in ("record", "look_up"):
        delattr(recaller, name)
    writer.capacity = room
    writer.flush()
    print(f"recall wall ms, {len(requests)} queries, A/B alternated per query (p50, mean):")
    for mode, values in {**samples, **stages}.items():
        print(
            f"  {mode:28s} {1000 * statistics.median(values):7.3f} "
            f"{1000 * statistics.fmean(values):7.3f}"
        )
    before, after = (statistics.median(samples[m]) for m in ("in the recall", "behind the reply"))
    print(f"  p50 difference {1000 * (before - after):.3f} ms ({after / before:.3f}x)")
    return 0


def _timing(fn: Callable[..., Any], into: list[float]) -> Callable[..., Any]:
    def timed(*args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            into.append(time.perf_counter() - start)

    return timed


class Immediate:
    """An executor that runs the call at once (experiment: no look-up thread)."""

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        out: Future[Any] = Future()
        out.set_result(fn(*args))
        return out


if __name__ == "__main__":
    sys.exit(main())
