"""What each FT.SEARCH shape of a recall costs on the loaded search engine
(docs/benchmarks.md, valkey-search).

``python -m bench.shapes --size 10k`` imports the bench corpus into a private Valkey (the engine is
``KENNING_SEARCH_MODULE``'s, RediSearch when unset), then times, interleaved, one command at a time
over the same paraphrase queries: a bare KNN, the KNN with each prefilter a recall adds one by one,
a recall's own candidate and identifier searches, and the match-all. Prints one JSON object: per
shape, the median milliseconds of one FT.SEARCH (the one memory index) and the rows it returned.

The corpus vectors are cached in ``$TMPDIR/kenning-shapes-<size>-<seed>-<model>.npy`` so that the
second engine's probe embeds nothing (the texts and their order are the seed's).
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from bench import families
from bench.corpus import Corpus, generate
from bench.run import free_port
from kenning.core import query
from kenning.core.schema import vector_bytes
from kenning.core.settings import load_settings
from kenning.engine import Engine
from kenning.memory.bulk import Bulk
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest, plan
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder, Vector, load_embedder
from kenning.store import MemoryStore, connect, search_module

REPEATS = 40


class CachedEmbedder:
    """The corpus's vectors from a file (or embedded once and saved there);
    other texts embedded live."""

    def __init__(self, inner: Embedder, path: Path, texts: list[str]) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dimension = inner.dimension
        if path.exists():
            matrix = np.load(path)
        else:
            matrix = np.asarray(inner.embed_many(texts), dtype=np.float32)
            np.save(path, matrix)
        self.known = {t: matrix[i] for i, t in enumerate(texts)}

    def embed(self, text: str) -> Vector:
        return self.known[text] if text in self.known else self.inner.embed(text)

    def embed_many(self, texts: list[str]) -> list[Vector]:
        return [self.embed(t) for t in texts]


def shapes(
    engine: Engine, text: str, project: str, vector: bytes, namespace: str
) -> dict[str, list[str | bytes]]:
    """The FT.SEARCH argument lists to time for one query, by shape name."""
    p = plan(RecallRequest(text, projects=[project], top_k=10), engine.ctx.clock.now())
    recaller = engine.recaller
    index = engine.ctx.index
    clauses = recaller.clauses(p)

    def knn(k: int, *chosen: str) -> list[str | bytes]:
        return query.Search(
            index=index,
            namespaces=(namespace,),
            clauses=chosen,
            knn=k,
            vector=vector,
            ef_runtime=max(64, k),
            return_fields=("distance",),
        ).args()

    out: dict[str, list[str | bytes]] = {
        "bare KNN 10 (no filter)": knn(10),
        "bare KNN 40 (no filter)": knn(40),
        "KNN 40 state": knn(40, clauses[0]),
        "KNN 40 state project": knn(40, *clauses[:2]),
        "KNN 40 state project -trust (a recall's candidates)": knn(40, *clauses),
        "KNN 40 project": knn(40, clauses[1]),
        "KNN 40 project (one value)": knn(40, query.tag("project", [project])),
        "KNN 10 state project -trust": knn(10, *clauses),
        "KNN 20 state project -trust": knn(20, *clauses),
        "filter only state project -trust, count": query.Search(
            index=index, clauses=clauses, limit=0
        ).args(),
        "filter only state project -trust, 200 keys": query.Search(
            index=index, clauses=clauses, limit=200
        ).args(),
        "KNN 40 project state (project first)": knn(40, clauses[1], clauses[0]),
        "KNN 40 project state -trust (project first)": knn(
            40, clauses[1], clauses[0], *clauses[2:]
        ),
        "KNN 15 state project -trust + TEXT term (identifier search)": knn(
            15, *clauses, query.text_any("content", ["deploy"])
        ),
        "match-all count": query.Search(index=index, limit=0).args(),
    }
    return out


def measure(
    engine: Engine, client: Any, queries: list[tuple[str, str]]
) -> dict[str, dict[str, float]]:
    embedder = engine.ctx.embedder
    vectors = [vector_bytes(embedder.embed(t)) for t, _ in queries]
    namespace = max(
        ("episodic", "knowledge", "project"), key=lambda ns: _count(client, engine.ctx.index, ns)
    )
    samples: dict[str, list[float]] = {}
    rows: dict[str, list[int]] = {}
    for _ in range(max(1, REPEATS // len(queries))):
        for (text, project), vector in zip(queries, vectors, strict=True):
            # interleaved: drift hits all
            for name, args in shapes(engine, text, project, vector, namespace).items():
                seconds, reply = _timed(lambda a=args: client.execute_command(*a))  # type: ignore[misc]
                samples.setdefault(name, []).append(seconds)
                rows.setdefault(name, []).append(int(reply[0]))
    size = float(_count(client, engine.ctx.index, namespace))
    out = {
        name: {
            "p50_ms": round(1000 * statistics.median(s), 3),
            "rows_total_mean": statistics.fmean(rows[name]),
            "n": float(len(s)),
            "index_documents": size,
        }
        for name, s in samples.items()
    }
    return {**out, **_pools(engine, queries, vectors)}


def _pools(
    engine: Engine, queries: list[tuple[str, str]], vectors: list[bytes]
) -> dict[str, dict[str, float]]:
    """A recall's whole search phase (``Recaller.pool``: every namespace's KNN and the rows kept)
    with the store as configured (exact small sets on valkey-search) and with
    every KNN left to the engine."""
    configured = engine.ctx.store.memories
    stores = {
        "recall's search phase, store as configured": configured,
        "recall's search phase, every KNN by the engine": MemoryStore(
            configured.client, configured.prefix, exact_small_sets=False
        ),
    }
    samples: dict[str, list[float]] = {name: [] for name in stores}
    try:
        for (text, project), vector in zip(queries, vectors, strict=True):
            p = plan(RecallRequest(text, projects=[project], top_k=10), engine.ctx.clock.now())
            for name, store in stores.items():
                engine.ctx.store.memories = store
                seconds, _ = _timed(lambda p=p, v=vector: engine.recaller.pool(p, v))  # type: ignore[misc]
                samples[name].append(seconds)
    finally:
        engine.ctx.store.memories = configured
    return {
        name: {"p50_ms": round(1000 * statistics.median(s), 3), "n": float(len(s))}
        for name, s in samples.items()
    }


def _count(client: Any, index: str, namespace: str) -> int:
    reply = client.execute_command(
        *query.Search(index=index, namespaces=(namespace,), limit=0).args()
    )
    return int(reply[0])


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


@contextmanager
def imported(size: str, seed: int, prefix: str) -> Iterator[tuple[Engine, Any, Corpus]]:
    """The bench corpus of ``size`` imported (its vectors cached under the temp dir) into a
    private Valkey: the engine, its client and the corpus, for as long as the block runs."""
    corpus = generate(size, seed)
    base = load_settings()
    inner = load_embedder(base)
    cache = Path(tempfile.gettempdir()) / f"kenning-shapes-{size}-{seed}-{inner.model_name}.npy"
    embedder = CachedEmbedder(inner, cache, [i.content for i in corpus.items])
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        settings = base.model_copy(
            update={
                "data_dir": Path(tmp),
                "valkey_port": free_port(),
                "key_prefix": "bench:",
                "valkey_url": None,
            }
        )
        with EmbeddedValkey(settings):
            client = connect(settings)
            engine = Engine.open(settings, client, embedder)
            Bulk(engine.ctx, engine.memories).remember_many(
                [
                    Draft(
                        i.content,
                        namespace=i.namespace,
                        project=i.project,
                        tags=i.tags,
                        kind=i.kind,
                    )
                    for i in corpus.items
                ],
                actor="bench",
            )
            try:
                yield engine, client, corpus
            finally:
                client.close()  # type: ignore[no-untyped-call]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.shapes", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--size", default="10k")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--queries", type=int, default=20)
    parser.add_argument(
        "--config",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="CONFIG SET on the private server before measuring (repeatable)",
    )
    args = parser.parse_args(argv)
    with imported(args.size, args.seed, "kenning-shapes-") as (engine, client, corpus):
        queries = families.paraphrase_queries(
            corpus, random.Random(f"shapes:{args.seed}"), args.queries
        )
        for name, value in (c.split("=", 1) for c in args.config):
            client.config_set(name, value)
        found = search_module.detect(client)
        out = {
            "engine": f"{found.name} {found.version}" if found else "?",
            "size": args.size,
            "config": args.config,
            "shapes": measure(engine, client, [(q.text, q.project or "global") for q in queries]),
        }
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
