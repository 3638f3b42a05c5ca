"""The bulk import against the embedding alone, interleaved on the same texts (issue 21).

The box's speed drifts 10-40% within minutes, so the two rates are never measured apart: the texts
are cut into rounds, and each round is embedded alone (two interleaved slices at once, as
``kenning.memory.bulk.Bulk`` embeds) and imported, the order of the two alternating from round
to round.
Each side's rate is its texts over its summed seconds; the ratio divides those sums.

``bench.runner`` measures it on the corpus's first rounds as they are imported (into the run's
store, empty at the start). As a script it alternates this tree's import with another ``bulk.py``
(e.g. main's), each into a store of its own on one private Valkey, beside the embedding alone:

    PYTHONPATH=$PWD .venv/bin/python -m bench.import_rate --size 10k --texts 6144 \
        [--baseline ../main/kenning/memory/bulk.py]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench import system
from bench.corpus import generate
from kenning.engine import Engine
from kenning.memory.bulk import Bulk
from kenning.memory.memories import Draft
from kenning.runtime.embedding import Embedder

# two batches of the import: the first one's write overlaps the second's embedding
ROUND_TEXTS = 512
ROUNDS = 8
WORKERS = 2  # kenning.memory.bulk.Bulk's default
EMBEDDING = "embedding"
IMPORT = "import"

Side = Callable[[Sequence[Draft]], Any]


def interleave(
    drafts: Sequence[Draft],
    sides: dict[str, Side],
    *,
    round_texts: int = ROUND_TEXTS,
    rounds: int = ROUNDS,
) -> dict[str, Any]:
    """Run every side on each round of ``drafts`` (up to ``rounds`` rounds), rotating their order
    per round; each side's seconds, rate, and every side's rate over the embedding's (when
    there is an embedding side)."""
    spent: dict[str, list[float]] = {name: [] for name in sides}
    texts = 0
    names = list(sides)
    for number in range(rounds):
        chunk = drafts[number * round_texts : (number + 1) * round_texts]
        if not chunk:
            break
        texts += len(chunk)
        for name in names[number % len(names) :] + names[: number % len(names)]:
            start = time.perf_counter()
            sides[name](chunk)
            spent[name].append(time.perf_counter() - start)
    out: dict[str, Any] = {"texts": texts, "round_texts": round_texts, "workers": WORKERS}
    for name, rounds_spent in spent.items():
        total = sum(rounds_spent)
        out[name] = {
            "seconds": total,
            "texts_per_second": texts / total if total > 0 else None,
            "round_seconds": [round(s, 3) for s in rounds_spent],
        }
    floor = out.get(EMBEDDING, {}).get("texts_per_second")
    out["over_embedding"] = {
        name: out[name]["texts_per_second"] / floor
        for name in sides
        if name != EMBEDDING and floor and out[name]["texts_per_second"]
    }
    if EMBEDDING in spent:  # the median round: robust to one round hit by a neighbour's burst
        out["over_embedding_median_round"] = {
            name: statistics.median(
                e / s for e, s in zip(spent[EMBEDDING], spent[name], strict=True)
            )
            for name in sides
            if name != EMBEDDING
        }
    return out


def embedding_only(embedder: Embedder) -> Side:
    """The embedding alone of a round's texts: ``WORKERS`` interleaved slices at once."""

    def embed(drafts: Sequence[Draft]) -> None:
        texts = [d.content for d in drafts]
        with ThreadPoolExecutor(WORKERS) as pool:
            list(pool.map(embedder.embed_many, [texts[i::WORKERS] for i in range(WORKERS)]))

    return embed


def importing(
    engine: Engine, actor: str, bulk: type[Bulk] = Bulk, into: list[Any] | None = None
) -> Side:
    """The bulk import of a round's drafts (its results appended to ``into``)."""

    def run(drafts: Sequence[Draft]) -> None:
        results = bulk(engine.ctx, engine.memories, workers=WORKERS).remember_many(
            drafts, actor=actor
        )
        if into is not None:
            into.extend(results)

    return run


def load_bulk(path: Path) -> type[Bulk]:
    """The ``Bulk`` class of another ``bulk.py`` (e.g. main's),
    importing this tree's ``kenning``."""
    spec = importlib.util.spec_from_file_location("baseline_bulk", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load {path}: give the path of a kenning/memory/bulk.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found: type[Bulk] = module.Bulk
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.import_rate", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--size", default="10k", help="the corpus whose first texts are imported (1k, 10k, 100k)"
    )
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument(
        "--texts",
        type=int,
        default=ROUND_TEXTS * ROUNDS,
        help=f"texts in all (rounds of {ROUND_TEXTS})",
    )
    parser.add_argument(
        "--baseline", type=Path, help="another bulk.py to alternate with this tree's import"
    )
    args = parser.parse_args(argv)
    drafts = [
        Draft(i.content, namespace=i.namespace, project=i.project, tags=i.tags, kind=i.kind)
        for i in generate(args.size, args.seed).items[: args.texts]
    ]
    # bench.roundtrips imports bench.runner, which imports this
    from bench.roundtrips import private_engine

    with private_engine() as (engine, _client):
        sides = {EMBEDDING: embedding_only(engine.ctx.embedder), IMPORT: importing(engine, "bench")}
        if args.baseline is not None:
            other = Engine.open(
                engine.ctx.settings.model_copy(update={"key_prefix": "baseline:"}),
                engine.ctx.store.client,
                engine.ctx.embedder,
            )
            sides["baseline"] = importing(other, "bench", load_bulk(args.baseline))
        # warm the model up before the first round
        embedding_only(engine.ctx.embedder)(drafts[:200])
        load, steal = os.getloadavg(), system.cpu_times()
        out = interleave(drafts, sides, rounds=-(-len(drafts) // ROUND_TEXTS))
    out["machine"] = {
        "load_average": [round(x, 2) for x in load],
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
        "cpu_steal_percent": system.steal_percent(steal, system.cpu_times()),
        "cpu": system.machine()["cpu"],
    }
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
