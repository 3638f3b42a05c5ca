"""A remember's searches (the duplicate KNN and the contradiction check's) by the engine's KNN and
by prefilter's exact small-set path, interleaved on one store (issue 21).

    KENNING_SEARCH_MODULE=.../libsearch.so PYTHONPATH=$PWD .venv/bin/python -m bench.remember_searches --size 10k

Imports the bench corpus (vectors cached as ``bench.shapes`` caches them) into a private Valkey,
then for each of ``--texts`` new texts (a corpus memory reworded) sends the searches a remember
sends with its claim (``MemoryStore.batch``), alternately with ``exact_small_sets`` off (one round
trip, the engine walks its graph with the filter inline) and on (the filter's keys, then their
vectors: two); prints each side's p50/p95 ms and whether both found the same rows.
"""  # noqa: E501

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import time
from typing import Any

from bench.shapes import imported
from kenning.core.models import Memory
from kenning.memory.memories import Draft
from kenning.store import MemoryStore, Near, SearchResult


def _timed(store: MemoryStore, wanted: list[Near]) -> tuple[float, list[SearchResult]]:
    start = time.perf_counter()
    batch = store.batch(wanted)
    pipe = store.client.pipeline(transaction=False)
    batch.queue(pipe)
    results = batch.finish(pipe.execute())  # type: ignore[no-untyped-call]
    return (time.perf_counter() - start) * 1000, results


def _keys(results: list[SearchResult]) -> list[list[str]]:
    return [[h.memory.key for h in r.hits] for r in results]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.remember_searches", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--size", default="10k")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--texts", type=int, default=200)
    args = parser.parse_args(argv)
    with imported(args.size, args.seed, "kenning-remember-searches-") as (engine, client, corpus):
        sides = {
            "engine_knn": MemoryStore(client, engine.store.prefix, exact_small_sets=False),
            "exact_small_sets": MemoryStore(client, engine.store.prefix, exact_small_sets=True),
        }
        times: dict[str, list[float]] = {name: [] for name in sides}
        same = 0
        for n, item in enumerate(random.Random(args.seed).sample(corpus.items, args.texts)):
            draft = Draft(
                f"As noted again: {item.content}", namespace=item.namespace, project=item.project
            )
            memory = Memory(
                key=engine.store.memories.new_key(item.namespace, f"X{n:025d}"),
                content=draft.content,
                namespace=item.namespace,
                project=item.project,
                created_at=1.0,
                updated_at=1.0,
            )
            vector = engine.ctx.embedder.embed(draft.content)
            wanted = [
                Near(engine.memories.duplicate_search(item.namespace, item.project, vector)),
                *engine.contradictions.before_write(memory, vector),
            ]
            found: dict[str, Any] = {}
            for name in list(sides) if n % 2 == 0 else list(reversed(sides)):
                took, found[name] = _timed(sides[name], wanted)
                times[name].append(took)
            same += _keys(found["engine_knn"]) == _keys(found["exact_small_sets"])
    print(
        json.dumps(
            {
                "size": args.size,
                "texts": args.texts,
                "same_rows": same,
                "load": os.getloadavg(),
                **{
                    name: {
                        "p50_ms": round(statistics.median(t), 3),
                        "p95_ms": round(statistics.quantiles(t, n=20)[-1], 3),
                    }
                    for name, t in times.items()
                },
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
