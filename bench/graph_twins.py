"""Identical vectors in one HNSW graph (issue 41): how many stored points a KNN by their own vector
misses, with one text's copies stored as one vector or spread for their keys
(kenning.store.vectors.spread).

A bare vector index (the memory index's HNSW parameters: M 16, EF_CONSTRUCTION 200, COSINE,
FLOAT32) in a private Valkey with the configured search module; the first N real embeddings of the
100k corpus (bench.corpus seed 7: about half of its lines repeat a text in another project), cached
under ``~/.cache/kenning/bench/`` by ``bench.rebuild_recall``; each written as one HSET (pipelined
200 at a time, no transaction) in one of three orders -- ``corpus`` (an import's), ``shuffled`` (a
restore's or a reindex's: a key order unrelated to the texts), ``grouped`` (sorted by text: the
copies of a text one after another) -- then every point searched by its own vector at EF_RUNTIME
256, k 10 (a miss: its key absent while a returned row is farther than itself; ties with copies
are not misses).

    env PYTHONPATH=$PWD .venv/bin/python -m bench.graph_twins --size 50000 --order shuffled
    ... --spread 0.001   # every vector written as the store writes it now

Prints one line per run and writes nothing.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from bench.corpus import generate
from bench.run import private_store
from bench.scale_vectors import base_vectors, cache_dir
from kenning.core import schema
from kenning.core.settings import Settings
from kenning.store import vectors

EF = 256
K = 10
TIE = 1e-4
BATCH = 200
ORDERS = ("corpus", "shuffled", "grouped")


def _cached(n: int) -> tuple[list[str], np.ndarray[Any, Any]]:
    items = generate("100k", 7).items
    found = sorted(cache_dir().glob("corpus-*-100k-seed7.npy"))
    if not found:
        raise SystemExit("no cached corpus vectors: run python -m bench.rebuild_recall once first")

    def refuse(texts: list[str]) -> list[Any]:
        raise SystemExit(f"the cache {found[0]} does not hold the corpus ({len(texts)} texts)")

    matrix = base_vectors(refuse, [i.content for i in items], found[0])
    return [i.content for i in items[:n]], np.ascontiguousarray(matrix[:n], dtype=np.float32)


def _settled(client: Any, n: int) -> None:
    for _ in range(600):
        reply = client.execute_command("FT.INFO", "twins")
        info = {_text(reply[i]): reply[i + 1] for i in range(0, len(reply) - 1, 2)}
        queued = int(float(_text(info.get("mutation_queue_size", 0))))
        if int(float(_text(info.get("num_docs", 0)))) >= n and queued == 0:
            return
        time.sleep(1)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def run(n: int, order: str, spread: float) -> dict[str, Any]:
    """The first ``n`` cached corpus embeddings, written and searched (``graph``)."""
    texts, matrix = _cached(n)
    return graph(texts, matrix, order, spread)


def graph(
    texts: list[str], matrix: np.ndarray[Any, Any], order: str, spread: float
) -> dict[str, Any]:
    """``matrix`` (one row per text) written in ``order`` into a bare vector index, each row spread
    for its key by ``spread`` (0: as given), then every point searched by its own vector."""
    n = len(texts)
    copies: dict[str, int] = {}
    for t in texts:
        copies[t] = copies.get(t, 0) + 1
    twin = np.array([copies[t] > 1 for t in texts])
    if spread:
        matrix = np.stack(
            [vectors.spread(f"twins:{i}", row, spread) for i, row in enumerate(matrix)]
        )
    rows = list(range(n))
    if order == "grouped":
        rows.sort(key=lambda i: texts[i])
    elif order == "shuffled":
        np.random.default_rng(5).shuffle(rows)
    with private_store(Settings()) as (_, client):
        client.execute_command(
            "FT.CREATE", "twins", "ON", "HASH", "PREFIX", "1", "twins:", "SCHEMA",
            "v", "VECTOR", "HNSW", "10", "TYPE", "FLOAT32", "DIM", str(matrix.shape[1]),
            "DISTANCE_METRIC", "COSINE", "M", str(schema.HNSW_M),
            "EF_CONSTRUCTION", str(schema.HNSW_EF_CONSTRUCTION),
        )  # fmt: skip
        start = time.perf_counter()
        for first in range(0, n, BATCH):
            pipe = client.pipeline(transaction=False)
            for i in rows[first : first + BATCH]:
                pipe.hset(f"twins:{i}", "v", schema.vector_bytes(matrix[i]))
            pipe.execute()
        _settled(client, n)
        built = time.perf_counter() - start
        missed = _missed(client, matrix)
    with_twin = sum(1 for i in missed if twin[i])
    return {
        "size": n,
        "order": order,
        "spread": spread,
        "build_seconds": built,
        "missed": len(missed),
        "missed_with_a_copy": with_twin,
        "with_a_copy": int(twin.sum()),
    }


def _missed(client: Any, matrix: np.ndarray[Any, Any]) -> list[int]:
    out: list[int] = []
    for first in range(0, len(matrix), BATCH):
        asked = range(first, min(len(matrix), first + BATCH))
        pipe = client.pipeline(transaction=False)
        for i in asked:
            pipe.execute_command(
                "FT.SEARCH", "twins", f"*=>[KNN {K} @v $q EF_RUNTIME {EF} AS d]",
                "PARAMS", "2", "q", schema.vector_bytes(matrix[i]),
                "RETURN", "1", "d", "LIMIT", "0", str(K), "DIALECT", "2",
            )  # fmt: skip
        for i, reply in zip(asked, pipe.execute(), strict=True):
            keys = [_text(reply[j]) for j in range(1, len(reply), 2)]
            far = [float(_text(reply[j + 1][1])) for j in range(1, len(reply), 2)]
            if f"twins:{i}" not in keys and (len(keys) < K or max(far) > TIE):
                out.append(i)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.graph_twins", description=__doc__)
    parser.add_argument("--size", type=int, default=50_000)
    parser.add_argument("--order", choices=ORDERS, default="shuffled")
    parser.add_argument("--spread", type=float, default=0.0, help="0: copies keep one vector")
    args = parser.parse_args(argv)
    got = run(args.size, args.order, args.spread)
    print(
        f"{got['size']:,} {got['order']}, spread {got['spread']:g}: built in "
        f"{got['build_seconds']:.0f} s; missed {got['missed']:,} "
        f"({got['missed_with_a_copy']:,} of the {got['with_a_copy']:,} with a copy)",
        flush=True,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
