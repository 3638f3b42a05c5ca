"""A scale point (`kenning bench --size 1m`): a million memories with precomputed vectors
(bench.scale_vectors) in a private Valkey, written with the store's own bulk path (key layout, audit
and indexes are the real ones).

Measures the load and index build time, memory per memory and server RSS, recall p50/p95 through the
engine with real query embeddings (the embedding alone and one bare KNN beside it, for the ratio),
and the HNSW index's recall@10 against exact search (numpy over the same rows) at
several EF_RUNTIME values.

Retrieval quality (hit rates) is not measured here: the derived vectors keep the real distribution's
neighbourhoods, not the meaning of their own texts. The store is filled without the duplicate check
(a KNN per memory would double the load time); duplicates are measured at 10k and 100k.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from bench import families, metrics, system
from bench.corpus import Corpus
from bench.families import Query
from bench.instrument import Stopwatch, TimedEmbedder, TimedMemoryStore
from bench.run import ACTOR, TOP_K, Run, RunConfig, free_port
from bench.runner import latency
from bench.scale_vectors import CHUNK, Matrix, scale_corpus, scale_vectors
from kenning.core import schema
from kenning.core.query import Search
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder
from kenning.store import AuditEvent, connect, digest, search_module
from kenning.store.indexes import info as index_info

LOAD_BATCH = 1_000
EF_CURVE = (10, 64, 128, 256)
BAND = 200  # exact neighbours kept per query to see how many lie close to the k-th
MEMORY_LIMIT_BYTES = 12 * 1024**3  # stop before the private Valkey takes half of a 24 GB box
Progress = Callable[[str], None]


class TooBig(RuntimeError):
    """The private Valkey outgrew the limit while loading."""


def execute(
    n: int,
    embedder: Embedder,
    base: Any,
    *,
    seed: int,
    queries: int,
    progress: Progress,
    memory_limit: int = MEMORY_LIMIT_BYTES,
    base_size: str = "10k",
    label: str = "",
) -> dict[str, Any]:
    """The whole scale point; the returned dict is the run's JSON (same keys as a normal run
    where they mean the same thing, the rest under ``scale_point``)."""
    corpus, matrix, made = corpus_and_vectors(n, embedder, base, seed, base_size, progress)
    with tempfile.TemporaryDirectory(prefix="kenning-scale-") as tmp:
        settings = base.model_copy(
            update={
                "data_dir": Path(tmp),
                "valkey_port": free_port(),
                "key_prefix": "bench:",
                "valkey_url": None,
            }
        )
        with EmbeddedValkey(settings) as server:
            client = connect(settings)
            # a 5 GB AOF and its rewrites measure the disk, not the store
            client.config_set("appendonly", "no")
            watch = Stopwatch()
            engine = Engine.open(settings, client, TimedEmbedder(embedder, watch))
            engine.ctx.store.memories = TimedMemoryStore(engine.ctx.store.memories, watch)
            run = Run(
                engine, watch, corpus, RunConfig(size=label or str(n), seed=seed, queries=queries)
            )
            out = measure(
                run,
                embedder,
                client,
                matrix,
                server.process.pid if server.process else None,
                memory_limit,
                progress,
            )
            out["scale_point"]["vectors"] = made
            client.close()  # type: ignore[no-untyped-call]
    return out


def corpus_and_vectors(
    n: int, embedder: Embedder, base: Any, seed: int, base_size: str, progress: Progress
) -> tuple[Corpus, Matrix, Any]:
    """The scale point's corpus of ``n`` items and their precomputed vectors (and how they were
    made)."""
    progress(f"building the {n}-item corpus")
    corpus = scale_corpus(n, seed, base_size)
    matrix, made = scale_vectors(
        embedder.embed_many,
        corpus,
        model=embedder.model_name,
        backend=base.embedding_backend,
        seed=seed,
        base_size=base_size,
        progress=progress,
    )
    return corpus, matrix, made


def measure(
    run: Run,
    embedder: Embedder,
    client: Any,
    matrix: Matrix,
    pid: int | None,
    memory_limit: int,
    progress: Progress,
) -> dict[str, Any]:
    module = search_module.detect(client)
    out: dict[str, Any] = {
        "corpus": {
            "size": run.config.size,
            "seed": run.config.seed,
            "items": len(run.corpus.items),
            "projects": len(run.corpus.projects()),
        },
        "search_module": {
            "name": module.name if module else "",
            "version": module.version if module else "",
        },
    }
    progress(f"search module: {out['search_module']['name']} {out['search_module']['version']}")
    out["import"], rows = load(run, client, matrix, memory_limit, progress)
    scale: dict[str, Any] = {"n": len(run.corpus.items), "load_seconds": out["import"]["seconds"]}
    scale["index_wait_seconds"], scale["indexes"] = wait_indexed(client, run.engine.ctx.indexes)
    scale["index_build_seconds"] = scale["load_seconds"] + scale["index_wait_seconds"]
    out["memory"] = {"valkey_rss_mb": system.rss_mb(pid), "bench_process_rss_mb": system.rss_mb()}
    progress(
        f"memory: {out['import']['bytes_per_memory']:.0f} B per memory, Valkey RSS "
        f"{out['memory']['valkey_rss_mb']:.0f} MB"
    )
    asked = _queries(run.corpus, run.config.seed, run.config.queries)
    out["latency"] = _stage(
        progress,
        f"engine recall ({len(asked)} queries) and 100 remembers",
        lambda: _engine_latency(run, asked),
    )
    vectors, embed_seconds = _embed_each(embedder, [q.text for q in asked])
    scale["floors"] = _stage(
        progress,
        "floors: the embedding alone and one bare KNN, same queries",
        lambda: _floors(run, client, scale["indexes"], vectors, embed_seconds),
    )
    scale["ratio_recall_p50_over_floor"] = _ratio(out["latency"], scale["floors"])
    # one index holds every namespace
    every = {schema.INDEX: [i for held in rows.values() for i in held]}
    scale["hnsw_recall"] = _stage(
        progress,
        "HNSW recall@10 against exact search",
        lambda: hnsw_curve(
            client, run.engine.ctx.indexes, every, matrix, np.asarray(vectors), progress
        ),
    )
    out["scale_point"] = scale
    out["memory"]["valkey_rss_mb_end"] = system.rss_mb(pid)
    return out


def _stage(progress: Progress, label: str, step: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """One measurement after the load: a failure is recorded, never thrown away
    with the hour of loading."""
    progress(label)
    try:
        return step()
    except Exception as exc:  # the run's other numbers are still worth writing
        progress(f"  failed: {exc!r}")
        return {"not_measured": repr(exc)}


def _engine_latency(run: Run, asked: list[Query]) -> dict[str, Any]:
    for query in asked:
        run.recall(query)
    for write in families.duplicate_writes(
        run.corpus, random.Random(f"scale:{run.config.seed}"), 100
    ):
        run.remember(write)
    return latency(run)


def _floors(
    run: Run, client: Any, indexes: dict[str, Any], vectors: list[Any], embed_seconds: list[float]
) -> dict[str, Any]:
    """The embedding alone and one bare KNN on the largest index (no
    filter), for the same queries."""
    largest = max(indexes, key=lambda name: indexes[name]["num_docs"])
    _, knn = _knn_all(
        client, run.engine.ctx.indexes[largest], vectors, run.engine.ctx.settings.ef_runtime, TOP_K
    )
    return {
        "embed": metrics.latency_summary(embed_seconds),
        "bare_knn": metrics.latency_summary(knn),
        "bare_knn_index": largest,
    }


def _ratio(engine: dict[str, Any], floors: dict[str, Any]) -> float | None:
    """engine recall p50 / (embedding p50 + bare KNN p50); None when
    either side was not measured."""
    if "not_measured" in engine or "not_measured" in floors:
        return None
    total: float = engine["recall"]["total"]["p50_ms"]
    floor: float = floors["embed"]["p50_ms"] + floors["bare_knn"]["p50_ms"]
    return total / floor


def _queries(corpus: Corpus, seed: int, n: int) -> list[Query]:
    """Near-verbatim, paraphrase and identifier queries of the corpus (the
    normal run's recall mix)."""
    rng = random.Random(f"scale-queries:{seed}")
    return (
        families.verbatim_queries(corpus, rng, n)
        + families.paraphrase_queries(corpus, rng, n)
        + families.identifier_queries(corpus, rng, n)
    )


def _embed_each(embedder: Embedder, texts: Sequence[str]) -> tuple[list[Any], list[float]]:
    vectors: list[Any] = []
    seconds: list[float] = []
    for text in texts:
        start = time.perf_counter()
        vectors.append(embedder.embed(text))
        seconds.append(time.perf_counter() - start)
    return vectors, seconds


def load(
    run: Run, client: Any, matrix: Matrix, memory_limit: int, progress: Progress
) -> tuple[dict[str, Any], dict[str, list[int]]]:
    """Write every corpus item with its vector through the store's ``write_many`` (each memory
    and its audit event one unit of work, a batch one pipelined round trip), two
    batches in flight (one is built in Python while Valkey indexes the other).

    Returns the import summary and, per namespace, the matrix rows that index
    holds (for exact search)."""
    before = system.used_memory(client)
    start = time.perf_counter()
    items = run.corpus.items
    namespaces: list[str] = [""] * len(items)
    with ThreadPoolExecutor(2) as pool:
        pending: deque[tuple[int, Future[list[tuple[str, str]]]]] = deque()
        for first in [*range(0, len(items), LOAD_BATCH), None]:
            if first is not None:
                pending.append((first, pool.submit(_write_batch, run, matrix, first)))
            while pending and (first is None or len(pending) > 2):
                at, future = pending.popleft()
                for offset, (key, namespace) in enumerate(future.result()):
                    run.uid_of[key] = items[at + offset].uid
                    namespaces[at + offset] = namespace
                done = min(at + LOAD_BATCH, len(items))
                if done % 50_000 == 0 or done == len(items):
                    _check(client, done, len(items), start, memory_limit, progress)
    seconds = time.perf_counter() - start
    delta = system.used_memory(client) - before
    rows: dict[str, list[int]] = {}
    for row, namespace in enumerate(namespaces):
        rows.setdefault(namespace, []).append(row)
    summary = {
        "seconds": seconds,
        "stored": len(items),
        "duplicates_refused": 0,
        "memories_per_second": len(items) / seconds,
        "valkey_used_memory_delta": delta,
        "bytes_per_memory": delta / max(len(items), 1),
        "duplicate_check": False,
    }
    return summary, rows


def _write_batch(run: Run, matrix: Matrix, first: int) -> list[tuple[str, str]]:
    """Validate, build and write one batch (memories and their audit events);
    (key, namespace) per item."""
    batch = run.corpus.items[first : first + LOAD_BATCH]
    built = [
        run.engine.memories._validated(
            Draft(i.content, namespace=i.namespace, project=i.project, tags=i.tags, kind=i.kind),
            ACTOR,
        )
        for i in batch
    ]
    now = run.engine.ctx.clock.now()
    events = [
        AuditEvent(
            actor=ACTOR,
            action="remember",
            key=m.key,
            at=now,
            after=digest(m.content),
            details={"via": "bulk"},
        )
        for m in built
    ]
    store = run.engine.ctx.store
    store.memories.write_many(
        [
            (m, v, [e])
            for m, v, e in zip(built, matrix[first : first + len(batch)], events, strict=True)
        ]
    )
    return [(m.key, m.namespace) for m in built]


def _check(
    client: Any, done: int, total: int, start: float, memory_limit: int, progress: Progress
) -> None:
    """Progress, and a stop before the server outgrows the limit."""
    used = system.used_memory(client)
    rate = done / (time.perf_counter() - start)
    progress(f"loaded {done}/{total} ({rate:.0f}/s, Valkey used_memory {used / 2**20:.0f} MB)")
    if used > memory_limit:
        raise TooBig(
            f"Valkey used {used / 2**30:.1f} GB after {done} memories; the limit is "
            f"{memory_limit / 2**30:.1f} GB (a smaller --size fits)"
        )


def wait_indexed(
    client: Any, indexes: dict[str, str], timeout: float = 7200.0
) -> tuple[float, dict[str, Any]]:
    """Seconds until every index reports its backfill done; FT.INFO of each at that point."""
    start = time.perf_counter()
    while True:
        infos = {ns: index_info(client, name) for ns, name in indexes.items()}
        if all(
            i is not None and not i.indexing and i.percent_indexed >= 1.0 for i in infos.values()
        ):
            break
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"the indexes were still indexing after {timeout:.0f} s")
        time.sleep(0.5)
    seconds = time.perf_counter() - start
    return seconds, {
        ns: {"name": i.name, "num_docs": i.num_docs} for ns, i in infos.items() if i is not None
    }


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def exact_top(
    matrix: Matrix, rows: list[int], queries: np.ndarray[Any, Any], k: int
) -> np.ndarray[Any, Any]:
    """The best k cosines of each query over ``rows`` of ``matrix``, best first (brute force)."""
    best = np.full((len(queries), k), -2.0, dtype=np.float32)
    index = np.asarray(rows)
    for start in range(0, len(index), CHUNK):
        sims = queries @ matrix[index[start : start + CHUNK]].T
        both = np.concatenate([best, sims], axis=1)
        best = -np.partition(-both, k - 1, axis=1)[:, :k]
    result: np.ndarray[Any, Any] = -np.sort(-best, axis=1)
    return result


def hnsw_curve(
    client: Any,
    indexes: dict[str, str],
    rows: dict[str, list[int]],
    matrix: Matrix,
    queries: np.ndarray[Any, Any],
    progress: Progress,
    k: int = TOP_K,
) -> dict[str, Any]:
    """recall@k of each namespace index holding >= 5% of the rows against
    exact search, per EF_RUNTIME.

    Strict: a returned row counts when its cosine reaches the exact k-th best (ties with
    duplicate texts count). Within 0.01: when it is within 0.01 of it -- rows that close are
    interchangeable for a recall, and with many near-twins (a template in hundreds of projects)
    the strict order among them is the noise's. ``band`` says how many rows lie that close to the
    k-th best, and how far the returned k-th best fell short of it."""
    queries = queries.astype(np.float32)
    out: dict[str, Any] = {"k": k, "queries": len(queries), "per_index": {}}
    total = sum(len(held) for held in rows.values())
    for namespace, held in rows.items():
        if len(held) < total / 20:
            continue
        start = time.perf_counter()
        best = exact_top(matrix, held, queries, BAND)
        exact_ms = (time.perf_counter() - start) * 1000 / len(queries)
        bar = best[:, k - 1]
        curve = []
        for ef in EF_CURVE:
            found, seconds = _knn_all(client, indexes[namespace], queries, ef, k)
            strict = [_hits(sims, bar[i], k, 1e-4) for i, (_, sims) in enumerate(found)]
            close = [_hits(sims, bar[i], k, 0.01) for i, (_, sims) in enumerate(found)]
            short = [
                float(bar[i] - min(sims)) if sims else 1.0 for i, (_, sims) in enumerate(found)
            ]
            curve.append(
                {
                    "ef_runtime": ef,
                    f"recall@{k}": float(np.mean(strict)),
                    f"recall@{k}_min": float(np.min(strict)),
                    f"recall@{k}_within_0.01": float(np.mean(close)),
                    "kth_cosine_shortfall_median": float(np.median(short)),
                    "knn": metrics.latency_summary(seconds),
                }
            )
        out["per_index"][namespace] = {
            "rows": len(held),
            "exact_ms_per_query": exact_ms,
            "curve": curve,
            "band": {
                f"rows_within_0.01_of_kth_median_of_{BAND}": float(
                    np.median((best >= bar[:, None] - 0.01).sum(axis=1))
                ),
                "top1_minus_kth_median": float(np.median(best[:, 0] - bar)),
            },
        }
        progress(
            f"  {namespace} ({len(held)} rows): "
            + ", ".join(
                f"ef {c['ef_runtime']}: {c[f'recall@{k}']:.3f} / {c[f'recall@{k}_within_0.01']:.3f}"
                for c in curve
            )
        )
    return out


def _knn_all(
    client: Any, index: str, queries: Sequence[Any] | np.ndarray[Any, Any], ef: int, k: int
) -> tuple[list[tuple[list[str], list[float]]], list[float]]:
    """Each query's KNN (no filter, only keys and distances back: the floor of a recall's
    search): its keys and their cosines (1 - distance), and each call's seconds."""
    found: list[tuple[list[str], list[float]]] = []
    seconds: list[float] = []
    for vector in queries:
        search = Search(
            index=index,
            knn=k,
            vector=schema.vector_bytes(vector),
            ef_runtime=max(ef, k),
            return_fields=(schema.DISTANCE_ALIAS,),
            limit=k,
        )
        start = time.perf_counter()
        reply = client.execute_command(*search.args())
        seconds.append(time.perf_counter() - start)
        keys = [_text(reply[i]) for i in range(1, len(reply) - 1, 2)]
        sims = [1.0 - float(_text(reply[i + 1][1])) for i in range(1, len(reply) - 1, 2)]
        found.append((keys, sims))
    return found, seconds


def _hits(sims: list[float], bar: float, k: int, tolerance: float) -> float:
    """The share of the k exact neighbours the index returned: rows within
    ``tolerance`` of the k-th best cosine."""
    return sum(1 for s in sims if s >= bar - tolerance) / k
