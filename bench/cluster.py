"""One server beside a 3-shard Valkey Cluster, same corpus, same run (`kenning bench --cluster`).

Both stores are valkey-search (RediSearch has no coordinator): the embedded server with the module
from KENNING_SEARCH_MODULE, and a local cluster of three primaries (kenning/ops/cluster.py) in
coordinator mode. Each is loaded with the scale point's corpus and precomputed vectors
(bench.scale: the store's own bulk path, so the cluster's units are split by slot) and measured
the same way: load time, bytes per memory (INFO used_memory summed over the primaries), recall
p50/p95 through the engine, the embedding and one bare KNN beside it (the coordinator's fan-out
and merge is the difference of the bare KNNs), and HNSW recall@10 against exact search.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bench import scale
from bench.instrument import Stopwatch, TimedEmbedder, TimedMemoryStore
from bench.run import Run, RunConfig, free_port
from bench.scale_vectors import Matrix
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.ops.cluster import LocalCluster
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder
from kenning.store import connect

SHARDS = 3
Opened = tuple[Settings, Any, int | None]


def execute(
    n: int,
    embedder: Embedder,
    base: Settings,
    *,
    seed: int,
    queries: int,
    progress: scale.Progress,
    label: str = "",
) -> dict[str, Any]:
    """Both stores measured in turn; the JSON holds each under its name."""
    if base.search_module is None:
        raise SystemExit("kenning bench --cluster needs KENNING_SEARCH_MODULE (valkey-search)")
    corpus, matrix, made = scale.corpus_and_vectors(n, embedder, base, seed, "10k", progress)
    out: dict[str, Any] = {"n": n, "shards": SHARDS, "vectors": made}
    for name, opener in (("one_server", _one_server), ("cluster", _cluster)):
        progress(f"== {name}")
        config = RunConfig(size=label or str(n), seed=seed, queries=queries)
        with (
            tempfile.TemporaryDirectory(prefix="kenning-cluster-bench-") as tmp,
            opener(base, Path(tmp)) as opened,
        ):
            out[name] = _measure(opened, embedder, corpus, matrix, config, progress)
    return out


def _measure(
    opened: Opened,
    embedder: Embedder,
    corpus: Any,
    matrix: Matrix,
    config: RunConfig,
    progress: scale.Progress,
) -> dict[str, Any]:
    settings, client, pid = opened
    watch = Stopwatch()
    engine = Engine.open(settings, client, TimedEmbedder(embedder, watch))
    engine.ctx.store.memories = TimedMemoryStore(engine.ctx.store.memories, watch)
    run = Run(engine, watch, corpus, config)
    measured = scale.measure(run, embedder, client, matrix, pid, scale.MEMORY_LIMIT_BYTES, progress)
    engine.close()
    return measured


@contextmanager
def _one_server(base: Settings, tmp: Path) -> Iterator[Opened]:
    settings = base.model_copy(
        update={"data_dir": tmp, "valkey_port": free_port(), "key_prefix": "bench:"}
    )
    settings = settings.model_copy(update={"valkey_url": None, "valkey_cluster": None})
    with EmbeddedValkey(settings) as server:
        client = connect(settings)
        client.config_set("appendonly", "no")
        yield settings, client, server.process.pid if server.process else None
        client.close()  # type: ignore[no-untyped-call]


@contextmanager
def _cluster(base: Settings, tmp: Path) -> Iterator[Opened]:
    with LocalCluster(tmp, base.search_module, shards=SHARDS) as formed:
        for port in formed.ports:
            formed.admin.run(port, "CONFIG", "SET", "appendonly", "no")
        settings = base.model_copy(
            update={
                "data_dir": tmp,
                "key_prefix": "bench:",
                "valkey_url": None,
                "valkey_cluster": SecretStr(formed.spec),
            }
        )
        client = connect(settings)
        first = formed.nodes[0].process.pid if formed.nodes else None
        yield settings, client, first
        client.close()  # type: ignore[no-untyped-call]


def table(result: dict[str, Any]) -> str:
    """The comparison as a Markdown table (docs/benchmarks.md)."""
    rows = [
        "| | one server | 3 shards |",
        "| --- | --- | --- |",
    ]
    for label, path in _ROWS:
        values = [_dig(result.get(side, {}), path) for side in ("one_server", "cluster")]
        rows.append(f"| {label} | " + " | ".join(_shown(v) for v in values) + " |")
    for ef in (10, 64, 256):
        values = [_recall_at(result.get(side, {}), ef) for side in ("one_server", "cluster")]
        rows.append(f"| recall@10 vs exact, EF_RUNTIME {ef} | " + " | ".join(values) + " |")
    return "\n".join(rows)


def _recall_at(side: Any, ef: int) -> str:
    curve = _dig(side, ("scale_point", "hnsw_recall", "per_index", "memories", "curve")) or []
    found = [point["recall@10"] for point in curve if point.get("ef_runtime") == ef]
    return f"{found[0]:.3f}" if found else "-"


_ROWS = (
    ("load seconds", ("import", "seconds")),
    ("bytes per memory", ("import", "bytes_per_memory")),
    ("recall p50 ms (engine)", ("latency", "recall", "total", "p50_ms")),
    ("recall p95 ms (engine)", ("latency", "recall", "total", "p95_ms")),
    ("bare KNN p50 ms", ("scale_point", "floors", "bare_knn", "p50_ms")),
    ("bare KNN p95 ms", ("scale_point", "floors", "bare_knn", "p95_ms")),
    ("embedding p50 ms", ("scale_point", "floors", "embed", "p50_ms")),
)


def _dig(data: Any, path: tuple[str, ...]) -> Any:
    for part in path:
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


def _shown(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if value >= 100 else f"{value:.2f}"


SIZES = {"1k": 1_000, "10k": 10_000, "100k": 100_000, "250k": 250_000, "500k": 500_000}
SIZES["1m"] = 1_000_000
RESULTS = Path(__file__).resolve().parent / "results" / "cluster"


def run(settings: Settings, *, size: str, seed: int, queries: int, out: Path | None) -> int:
    """`kenning bench --cluster --size N`: the JSON under bench/results/cluster/, the table
    printed."""
    from datetime import UTC, datetime

    from bench import main, system
    from kenning.runtime.embedding import load_embedder, resolve_backend

    settings = settings.model_copy(update={"embedding_backend": resolve_backend(settings)})
    embedder = load_embedder(settings)
    result: dict[str, Any] = {
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": system.machine(),
        "git": system.git_revision(),
    }
    result.update(
        execute(
            SIZES[size],
            embedder,
            settings,
            seed=seed,
            queries=queries,
            progress=main.progress,
            label=size,
        )
    )
    folder = out or RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{size}-cluster.json"
    path.write_text(json.dumps(result, indent=2, sort_keys=True, default=str) + "\n")
    print(table(result))
    print(f"wrote {path}", flush=True)
    return 0
