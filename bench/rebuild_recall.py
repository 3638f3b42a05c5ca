"""Recall that does not depend on how the graph was built (issue 41): recall@10 of the index's KNN
against exact search after a bulk load, after a restore and after a reindex, per EF_RUNTIME.

Each phase builds the HNSW graph another way: the bulk load writes the memories in pipelined
batches (the import's path), a restore (``Backups.restore``, what `kenning restore --apply`
runs) writes them one unit at a time into an emptied store, a reindex (``Maintenance.reindex``)
builds a new generation of the index from the hashes in one backfill. After each, two measures
per EF_RUNTIME:

- recall@10 of the unfiltered KNN against exact cosine (numpy over the same rows) for real query
  embeddings (the scale point's near-verbatim, paraphrase and identifier queries): strict (a
  returned row reaches the exact 10th cosine) and within 0.01 of it; the KNN's latency, one call
  at a time;
- **self-recall**: every stored memory (or ``--self`` of them) searched by its own vector must come
  back in the top 10. A miss is a memory whose key is absent while a returned row is farther than
  the memory itself (ties with identical texts in other projects fill the ten: not a miss).

After each build's curve the product's **self-check and repair** runs (``GraphSelfCheck``, what a
restore and a reindex end with: every stored memory searched by its own vector at the default
EF_RUNTIME, the missed ones re-inserted; timed, as seconds per 10k memories), then the sample's
self-recall misses and recall@10 are measured again at the default EF_RUNTIME. The builds' own
self-checks are deferred to that point, so "before" is the graph as the rebuild left it.

The vectors are real embeddings of the 100k corpus's texts (bench.corpus, seed 7; half of its
lines repeat a text in another project, as a team's store does), embedded once and cached under
``~/.cache/kenning/bench/``; a size takes the first N items. Run on one engine per call (the
configured search module, as the test suite chooses it):

    nice -n 10 env PYTHONPATH=$PWD .venv/bin/python -m bench.rebuild_recall --size 20k
    KENNING_SEARCH_MODULE=/work/shared/valkey-search/libsearch.so ... --size 20k

Results land in bench/results/rebuild/ as JSON; the table is printed.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench import families, metrics, system
from bench import unreachable as exactly
from bench.corpus import Corpus, Item, generate
from bench.run import ACTOR, private_store
from bench.scale import exact_top
from bench.scale_vectors import Matrix, base_vectors, cache_dir, cache_name
from kenning.core import schema
from kenning.core.query import Search
from kenning.core.settings import Settings
from kenning.curation.graph import GraphSelfCheck
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall_plan import RecallRequest
from kenning.runtime.embedding import Embedder, load_embedder, resolve_backend
from kenning.store import (
    AuditEvent,
    GraphCheck,
    Stored,
    digest,
    graph_check,
    search_module,
    unreachable,
)

SIZES = {"1k": 1_000, "5k": 5_000, "20k": 20_000, "50k": 50_000, "100k": 100_000}
EF_CURVE = (64, 128, 200, 256)
K = 10
LOAD_BATCH = 1_000
PIPELINE = 200  # self-recall KNNs per round trip
TIE = 1e-4  # cosine within which a returned row is as near as the memory itself
RESULTS = system.ROOT / "bench" / "results" / "rebuild"
Progress = Callable[[str], None]


def corpus_vectors(
    embedder: Embedder, backend: str, n: int, seed: int, progress: Progress
) -> tuple[list[Item], Matrix]:
    """The first ``n`` items of the 100k corpus and their real embeddings (cached: the corpus's
    distinct texts are embedded once)."""
    items = generate("100k", seed).items
    path = cache_dir() / cache_name("corpus", embedder.model_name, backend, "100k", seed)
    matrix = base_vectors(embedder.embed_many, [i.content for i in items], path, progress)
    return items[:n], np.ascontiguousarray(matrix[:n], dtype=np.float32)


def queries_of(items: list[Item], seed: int, n: int) -> list[families.Query]:
    """The scale point's near-verbatim, paraphrase and identifier queries of these items."""
    corpus = Corpus(seed=seed, size=str(len(items)), items=items)
    rng = random.Random(f"rebuild-queries:{seed}")
    return (
        families.verbatim_queries(corpus, rng, n)
        + families.paraphrase_queries(corpus, rng, n)
        + families.identifier_queries(corpus, rng, n)
    )


def query_vectors(embedder: Embedder, items: list[Item], seed: int, n: int) -> Matrix:
    """Real query embeddings of ``queries_of``."""
    asked = queries_of(items, seed, n)
    return np.asarray(embedder.embed_many([q.text for q in asked]), dtype=np.float32)


def recall_latency(
    engine: Engine, client: Any, asked: Sequence[families.Query], efs: Sequence[int] = (64, 256)
) -> dict[str, Any]:
    """Recall through the engine (query embedding included) at each EF_RUNTIME, alternating
    query by query: filtered to the query's project, and over every project."""
    settings, embedder = engine.ctx.settings, engine.ctx.embedder
    engines = {
        ef: Engine.open(settings.model_copy(update={"ef_runtime": ef}), client, embedder)
        for ef in efs
    }
    seconds: dict[str, list[float]] = {}
    for i, query in enumerate(asked):
        for ef in efs if i % 2 == 0 else tuple(reversed(efs)):
            only = [query.project] if query.project else None
            for scope, projects in (("project", only), ("every project", None)):
                request = RecallRequest(query.text, projects=projects, top_k=K, actor=ACTOR)
                start = time.perf_counter()
                engines[ef].recaller.recall(request)
                seconds.setdefault(f"{scope}, ef {ef}", []).append(time.perf_counter() - start)
    for opened in engines.values():
        opened.close()
    return {name: metrics.latency_summary(s) for name, s in seconds.items()}


def bulk_load(
    engine: Engine, items: list[Item], matrix: Matrix, *, identical: bool = False
) -> list[str]:
    """Write every item with its vector through the store's ``write_many`` (the import's
    batched units); the key of each row. The store spreads each vector for its key
    (kenning.store.vectors); ``identical`` writes the model's vectors as they are (``Stored``),
    as a store written before the spread holds them: copies of a text hold one vector."""
    keys: list[str] = []
    for first in range(0, len(items), LOAD_BATCH):
        built = [
            engine.memories._validated(
                Draft(i.content, namespace=i.namespace, project=i.project, tags=i.tags), ACTOR
            )
            for i in items[first : first + LOAD_BATCH]
        ]
        now = engine.ctx.clock.now()
        engine.ctx.store.memories.write_many(
            [
                (
                    m,
                    Stored(schema.vector_bytes(v)) if identical else v,
                    [AuditEvent(ACTOR, "remember", m.key, at=now, after=digest(m.content))],
                )
                for m, v in zip(built, matrix[first : first + len(built)], strict=True)
            ]
        )
        keys += [m.key for m in built]
    return keys


def knn(index: str, vector: Any, ef: int) -> Search:
    """The unfiltered KNN of a recall's depth (the self-check's): the k nearest, keys and
    distances only."""
    return graph_check.knn(index, schema.vector_bytes(vector), ef)


def _rows(reply: Any) -> tuple[list[str], list[float]]:
    return graph_check.rows_of(reply)


def quality(client: Any, index: str, matrix: Matrix, queries: Matrix, ef: int) -> dict[str, Any]:
    """recall@10 (strict, within 0.01) of the queries' KNNs against exact search, and the
    KNN's latency one call at a time."""
    bar = exact_top(matrix, list(range(len(matrix))), queries, K)[:, K - 1]
    strict, close, seconds = [], [], []
    for i, vector in enumerate(queries):
        start = time.perf_counter()
        reply = client.execute_command(*knn(index, vector, ef).args())
        seconds.append(time.perf_counter() - start)
        sims = _rows(reply)[1]
        strict.append(sum(s >= bar[i] - TIE for s in sims) / K)
        close.append(sum(s >= bar[i] - 0.01 for s in sims) / K)
    return {
        "recall@10": float(np.mean(strict)),
        "recall@10_min": float(np.min(strict)),
        "recall@10_within_0.01": float(np.mean(close)),
        "knn": metrics.latency_summary(seconds),
    }


def interleaved(
    client: Any, index: str, queries: Matrix, efs: Sequence[int] = (64, 256)
) -> dict[str, Any]:
    """The KNN's latency at each of ``efs``, the calls alternating query by query (the box
    drifts within minutes: two EF_RUNTIME values are only compared side by side)."""
    seconds: dict[int, list[float]] = {ef: [] for ef in efs}
    for i, vector in enumerate(queries):
        for ef in efs if i % 2 == 0 else tuple(reversed(efs)):
            start = time.perf_counter()
            client.execute_command(*knn(index, vector, ef).args())
            seconds[ef].append(time.perf_counter() - start)
    summary: dict[str, Any] = {str(ef): metrics.latency_summary(s) for ef, s in seconds.items()}
    low, high = str(efs[0]), str(efs[-1])
    summary["p50_ratio"] = summary[high]["p50_ms"] / summary[low]["p50_ms"]
    return summary


def self_misses(
    client: Any, index: str, keys: list[str], matrix: Matrix, rows: Sequence[int], ef: int
) -> list[int]:
    """The rows of the stored memories (of ``rows``) their own vector's KNN misses: the key is
    absent while a returned row is farther than the memory itself."""
    missed: list[int] = []
    for start in range(0, len(rows), PIPELINE):
        chunk = rows[start : start + PIPELINE]
        pipe = client.pipeline(transaction=False)
        for row in chunk:
            pipe.execute_command(*knn(index, matrix[row], ef).args())
        for row, reply in zip(chunk, pipe.execute(), strict=True):
            found, sims = _rows(reply)
            own = float(matrix[row] @ matrix[row])
            if keys[row] not in found and (len(sims) < K or min(sims) < own - TIE):
                missed.append(row)
    return missed


def twins(matrix: Matrix, rows: Sequence[int]) -> int:
    """How many of ``rows`` share their text with another row (an identical text elsewhere: the
    same vector, or within 1e-4 of it once spread for its key)."""
    return sum(int((matrix @ matrix[row] >= 1.0 - TIE).sum()) > 1 for row in rows)


def measure(
    client: Any,
    index: str,
    keys: list[str],
    matrix: Matrix,
    queries: Matrix,
    checked: Sequence[int],
    progress: Progress,
) -> list[dict[str, Any]]:
    """Per EF_RUNTIME: the queries' recall@10 and the self-recall misses over ``checked``; then
    the first EF_RUNTIME's misses again (``again``): fewer then means the engine was still
    indexing when the curve began, not a graph that cannot reach them."""
    curve: list[dict[str, Any]] = []
    for ef in EF_CURVE:
        point = {"ef_runtime": ef, **quality(client, index, matrix, queries, ef)}
        missed = self_misses(client, index, keys, matrix, checked, ef)
        point["self_checked"] = len(checked)
        point["self_missed"] = len(missed)
        point["self_missed_with_a_twin"] = twins(matrix, missed)
        point["self_missed_keys"] = [keys[row] for row in missed[:20]]
        curve.append(point)
        _said(point, len(checked), progress)
    again = self_misses(client, index, keys, matrix, checked, EF_CURVE[0])
    curve.append({"ef_runtime": EF_CURVE[0], "again": True, "self_missed": len(again)})
    progress(f"    ef {EF_CURVE[0]} again: self missed {len(again)}/{len(checked)}")
    return curve


def _said(point: dict[str, Any], checked: int, progress: Progress) -> None:
    progress(
        f"    ef {point['ef_runtime']}: recall@10 {point['recall@10']:.3f} "
        f"(within 0.01 {point['recall@10_within_0.01']:.3f}), "
        f"knn p50 {point['knn']['p50_ms']:.2f} ms, self missed {point['self_missed']}/{checked} "
        f"({point['self_missed_with_a_twin']} with a copy of its text elsewhere)"
    )


class _Later(GraphSelfCheck):
    """The self-check a restore and a reindex end with, left for ``repaired`` to run: the graph is
    measured as the rebuild built it, then after the repair."""

    def run(self, *, actor: str, repair: bool = True, index: str | None = None) -> GraphCheck:
        del actor, repair  # nothing checked here: ``repaired`` runs the real one
        return GraphCheck(index or "", self.ctx.settings.ef_runtime, 0, 0, 0, 0, 0, 0.0)


def deferred(engine: Engine) -> None:
    later = _Later(engine.ctx)
    engine.backups.graph = later
    engine.maintenance.graph = later


def repaired(
    engine: Engine,
    client: Any,
    keys: list[str],
    matrix: Matrix,
    queries: Matrix,
    checked: Sequence[int],
    progress: Progress,
) -> dict[str, Any]:
    """The product's self-check and repair (``GraphSelfCheck``: every stored memory), timed, then
    the sample's self-recall misses and recall@10 at the default EF_RUNTIME once more."""
    done = GraphSelfCheck(engine.ctx).run(actor=ACTOR)
    index, ef = engine.ctx.index, engine.ctx.settings.ef_runtime
    missed = self_misses(client, index, keys, matrix, checked, ef)
    listed = {  # what the check left unreachable: the store's KNN scores them exactly
        key: bytes(client.hget(key, schema.VECTOR_FIELD))
        for key in unreachable.read(client, engine.store.prefix).created
    }
    out = {
        "check": done.public(),
        "listed": len(listed),
        "listed_found": exactly.found(engine, listed, ef),
        "still_missed_with_a_twin": twins(matrix, [keys.index(k) for k in done.missed_keys]),
        "check_seconds_per_10k": done.seconds * 10_000 / max(done.checked, 1),
        "ef_runtime": ef,
        "self_checked": len(checked),
        "self_missed": len(missed),
        "self_missed_with_a_twin": twins(matrix, missed),
        "self_missed_keys": [keys[row] for row in missed[:20]],
        "recall@10": quality(client, index, matrix, queries, ef)["recall@10"],
    }
    progress(
        f"    repair: {done.describe()} in {done.seconds:.1f} s "
        f"({out['check_seconds_per_10k']:.1f} s per 10k); the sample then misses "
        f"{len(missed)}/{len(checked)} at ef {ef} ({out['self_missed_with_a_twin']} with a copy); "
        f"the store's KNN finds {out['listed_found']} of the {len(listed)} listed"
    )
    return out


def phases(
    engine: Engine, client: Any, items: list[Item], matrix: Matrix, *, identical: bool = False
) -> Iterator[tuple[str, Engine, list[str], float]]:
    """Build the index three ways, yielding after each: (phase, the engine serving, the key of
    each row, the build's seconds). The caller measures between the steps."""
    start = time.perf_counter()
    keys = bulk_load(engine, items, matrix, identical=identical)
    yield "bulk load", engine, keys, time.perf_counter() - start
    written = engine.backups.backup(vectors=True, label="rebuild", actor=ACTOR)
    path = Path(written.path)
    client.flushall()
    engine.close()
    engine = Engine.open(engine.ctx.settings, client, engine.ctx.embedder)
    deferred(engine)
    start = time.perf_counter()
    engine.backups.restore(path, dry_run=False, actor=ACTOR)
    yield "restore", engine, keys, time.perf_counter() - start
    start = time.perf_counter()
    engine.maintenance.reindex(actor=ACTOR)
    yield "reindex", engine, keys, time.perf_counter() - start


def run(settings: Settings, args: argparse.Namespace, progress: Progress) -> dict[str, Any]:
    """One size on the configured engine: every phase's curve, as the result JSON."""
    n = SIZES[args.size]
    backend = resolve_backend(settings)
    embedder = load_embedder(settings.model_copy(update={"embedding_backend": backend}))
    items, matrix = corpus_vectors(embedder, backend, n, args.seed, progress)
    asked = queries_of(items, args.seed, args.queries)
    queries = np.asarray(embedder.embed_many([q.text for q in asked]), dtype=np.float32)
    rng = random.Random(f"rebuild-self:{args.seed}")
    checked = sorted(rng.sample(range(n), min(n, args.self or n)))
    out: dict[str, Any] = {
        "size": n,
        "queries": len(queries),
        "hnsw_m": schema.HNSW_M,
        "vectors": "identical" if args.identical else "spread",
    }
    return out | curves(
        settings,
        embedder,
        items,
        matrix,
        queries,
        checked,
        progress,
        asked,
        identical=args.identical,
    )


def curves(
    settings: Settings,
    embedder: Embedder,
    items: list[Item],
    matrix: Matrix,
    queries: Matrix,
    checked: Sequence[int],
    progress: Progress,
    asked: Sequence[families.Query] = (),
    *,
    identical: bool = False,
) -> dict[str, Any]:
    """In a private store: each phase's build time, indexed count and ``measure`` curve; with
    ``asked``, recall's latency through the engine at the end (``recall_latency``). The exact
    search every measure compares with runs over the vectors as stored (``stored_matrix``).
    ``identical``: the vectors written as the model gives them (``bulk_load``)."""
    out: dict[str, Any] = {"phases": {}}
    with private_store(settings) as (private, client):
        out["search_module"] = _module(client)
        first = Engine.open(private, client, embedder)
        deferred(first)
        built = phases(first, client, items, matrix, identical=identical)
        for phase, engine, keys, seconds in built:
            index = engine.ctx.index
            matrix = stored_matrix(engine, keys)  # what the store holds: spread, or not
            progress(f"  {phase}: {seconds:.0f} s, index {index}")
            out["phases"][phase] = {
                "index_state": _state(client, index),
                "build_seconds": seconds,
                "num_docs": engine.ctx.store.index_info(index).num_docs,  # type: ignore[union-attr]
                "curve": measure(client, index, keys, matrix, queries, checked, progress),
                "interleaved": interleaved(client, index, queries),
            }
            out["phases"][phase]["repaired"] = repaired(
                engine, client, keys, matrix, queries, checked, progress
            )
        if asked:
            out["recall_latency"] = recall_latency(engine, client, asked)
            progress(f"  recall p50 ms: {_p50s(out['recall_latency'])}")
        engine.close()
    return out


def stored_matrix(engine: Engine, keys: list[str]) -> Matrix:
    """The vector each key's hash holds, as rows (a rebuild keeps them; every key is there)."""
    held = engine.ctx.store.vectors(keys)
    missing = [key for key, vector in zip(keys, held, strict=True) if vector is None]
    if missing:
        raise RuntimeError(f"{len(missing)} memories without a vector, e.g. {missing[0]}")
    return np.ascontiguousarray(np.stack([v for v in held if v is not None]), dtype=np.float32)


def _state(client: Any, index: str) -> dict[str, str]:
    """FT.INFO's indexing, backfill and queue entries as the engine reports them."""
    reply = client.execute_command("FT.INFO", index)
    pairs = dict(zip(reply[::2], reply[1::2], strict=True))
    words = ("index", "backfill", "mutation", "percent", "num_docs", "queue")
    return {
        _text(k): _text(v)
        for k, v in pairs.items()
        if any(w in _text(k) for w in words) and not isinstance(v, list)
    }


def _p50s(latency: dict[str, Any]) -> str:
    return ", ".join(f"{name} {value['p50_ms']:.2f}" for name, value in latency.items())


def _module(client: Any) -> dict[str, Any]:
    found = search_module.detect(client)
    return {"name": found.name, "version": found.version} if found else {}


def table(result: dict[str, Any]) -> str:
    """The result as the benchmark page's rows: per phase and EF_RUNTIME, recall@10 strict /
    within 0.01, self-recall misses, KNN p50 / p95."""
    engine = result["search_module"].get("name", "?")
    lines = [
        "| engine | N | built by | EF_RUNTIME | recall@10 (strict / within 0.01, min) "
        "| stored memories missed by their own vector | KNN p50 / p95 ms |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for phase, measured in result["phases"].items():
        for point in measured["curve"]:
            if point.get("again"):
                continue
            lines.append(
                f"| {engine} | {result['size']:,} | {phase} | {point['ef_runtime']} "
                f"| {point['recall@10']:.3f} / {point['recall@10_within_0.01']:.3f}, "
                f"{point['recall@10_min']:.1f} | {point['self_missed']} of "
                f"{point['self_checked']:,} ({point.get('self_missed_with_a_twin', '?')} with a "
                f"twin) | {point['knn']['p50_ms']:.2f} / "
                f"{point['knn']['p95_ms']:.2f} |"
            )
        fixed = measured.get("repaired")
        if fixed:
            lines.append(
                f"| {engine} | {result['size']:,} | {phase} + self-check "
                f"({fixed['check']['missed']} missed of {fixed['check']['checked']:,}, "
                f"{fixed['check']['reinserted']} re-inserted, "
                f"{fixed['check'].get('spread', 0)} identical copies spread, "
                f"{fixed.get('listed_found', '?')} of {fixed.get('listed', '?')} left found "
                "by the store's KNN, "
                f"{fixed['check_seconds_per_10k']:.1f} s per 10k) | {fixed['ef_runtime']} "
                f"| {fixed['recall@10']:.3f} | {fixed['self_missed']} of "
                f"{fixed['self_checked']:,} ({fixed['self_missed_with_a_twin']} with a twin) | |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rebuild_recall", description=__doc__)
    parser.add_argument("--size", choices=SIZES, default="20k")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--queries", type=int, default=100, help="queries per family (3 families)")
    parser.add_argument("--self", type=int, default=0, help="memories self-checked (0: all)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument(
        "--m", type=int, default=schema.HNSW_M, help="HNSW M to build with (the schema's default)"
    )
    parser.add_argument(
        "--identical",
        action="store_true",
        help="write the model's vectors as they are (a store before the spread: copies of a text "
        "hold one vector), the control for kenning.store.vectors.spread",
    )
    args = parser.parse_args(argv)
    # a trial of another graph degree: the schema's one declaration, changed for this process
    # (the index name's fingerprint follows it)
    schema.HNSW_M = args.m
    settings = Settings()
    settings = settings.model_copy(update={"restore_max_mb": 4096})
    started = datetime.now(UTC)
    result = {
        "started_at": started.isoformat(timespec="seconds"),
        "machine": system.machine(),
        "git": system.git_revision(),
        **run(settings, args, _progress),
    }
    result["machine"]["load_average_end"] = system.machine()["load_average"]
    args.out.mkdir(parents=True, exist_ok=True)
    name = result["search_module"].get("name", "engine")
    variant = ("" if args.m == 16 else f"-m{args.m}") + ("-identical" if args.identical else "")
    path = args.out / f"{started:%Y%m%dT%H%M%SZ}-{args.size}-{name}{variant}.json"
    path.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(table(result))
    print(f"wrote {path}", flush=True)
    return 0


def _progress(line: str) -> None:
    print(f"  {datetime.now(UTC):%H:%M:%S} {line}", flush=True)


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


if __name__ == "__main__":
    raise SystemExit(main())
