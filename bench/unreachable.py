"""What the exact look-up of unreachable memories finds and costs (issue 41; store/unreachable).

A private Valkey with the configured search module; N random unit vectors (seeded, no model) written
through the store as an import writes them, at a shallow depth (EF_RUNTIME 10 by default: the only
depth at which a graph this size misses memories; at 256 a real 100k store left 2). The self-check
repairs what it can and lists the rest. Then, interleaved per round, with the list as the check left
it and with the list emptied (the store's behaviour before):
- each listed memory searched by its own vector through ``MemoryStore.nearest`` (a recall's KNN, k
  10): how many are found (``--listed N`` keeps the first N of the check's list);
- ``--queries`` other random vectors through the same KNN: the p50 / p95 of one call (the cost the
  list adds to every KNN while it is not empty), and the same with a project filter.

    env PYTHONPATH=$PWD .venv/bin/python -m bench.unreachable [--size 5000] [--ef 10]

Writes bench/results/unreachable/<time>-<engine>.json and prints a table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from ulid import ULID

from bench import system
from bench.run import private_store
from kenning.core import query, schema
from kenning.core.models import Memory
from kenning.core.query import Search
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.runtime.embedding import load_embedder
from kenning.store import AuditEvent, Near, search_module, unreachable

RESULTS = Path(__file__).resolve().parent / "results" / "unreachable"
PROJECTS = 5


def populate(engine: Engine, matrix: np.ndarray[Any, Any]) -> list[str]:
    """One memory per row, in order, ``created_at`` one second apart; the keys."""
    keys: list[str] = []
    start = engine.ctx.clock.now()
    for first in range(0, len(matrix), 500):
        rows = []
        for i in range(first, min(len(matrix), first + 500)):
            key = engine.store.memories.new_key("knowledge", str(ULID()))
            at = start + i
            memory = Memory(
                key=key,
                content=f"random point {i}",
                namespace="knowledge",
                project=f"p{i % PROJECTS}",
                actor="bench",
                created_at=at,
                updated_at=at,
            )
            rows.append((memory, matrix[i], [AuditEvent("bench", "remember", key, at=at)]))
            keys.append(key)
        engine.store.memories.write_many(rows)
    return keys


def knn(engine: Engine, raw: bytes, ef: int, *clauses: str) -> Search:
    return Search(index=engine.ctx.index, clauses=clauses, knn=10, vector=raw, ef_runtime=ef)


def found(engine: Engine, listed: dict[str, bytes], ef: int) -> int:
    """How many listed memories a KNN by their own vector returns."""
    results = engine.store.memories.nearest([Near(knn(engine, raw, ef)) for raw in listed.values()])
    return sum(
        key in [h.memory.key for h in r.hits] for key, r in zip(listed, results, strict=True)
    )


def timed(engine: Engine, queries: list[bytes], ef: int, *clauses: str) -> list[float]:
    out: list[float] = []
    for raw in queries:
        start = time.perf_counter()
        engine.store.memories.nearest([Near(knn(engine, raw, ef, *clauses))])
        out.append((time.perf_counter() - start) * 1000)
    return out


def run(size: int, ef: int, n_queries: int, rounds: int, most: int) -> dict[str, Any]:
    rng = np.random.default_rng(11)
    matrix = rng.standard_normal((size + n_queries, 384)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    queries = [schema.vector_bytes(v) for v in matrix[size:]]
    with private_store(Settings(ef_runtime=ef)) as (settings, client):
        engine = Engine.open(settings, client, load_embedder(settings))
        populate(engine, matrix[:size])
        check = engine.maintenance.graph.run(actor="bench")
        register = unreachable.read(client, settings.key_prefix)
        if most:  # a shorter list (a real rebuild's: 2 of 100,000)
            kept = dict(list(register.created.items())[:most])
            register = unreachable.Register(register.index, kept)
        listed = {k: bytes(client.hget(k, schema.VECTOR_FIELD)) for k in register.created}
        project = query.tag("project", ["p0"])
        out: dict[str, Any] = {"listed": {"found": [], "ms": [], "filtered_ms": []}}
        out["emptied"] = {"found": [], "ms": [], "filtered_ms": []}
        for _ in range(rounds):
            for name in ("listed", "emptied"):
                keys = list(register.created) if name == "listed" else []
                unreachable.record(client, settings.key_prefix, register.index, keys)
                engine.store.memories.unreachable.forget()
                out[name]["found"].append(found(engine, listed, ef))
                out[name]["ms"] += timed(engine, queries, ef)
                out[name]["filtered_ms"] += timed(engine, queries, ef, project)
        module = search_module.detect(client)
        engine.close()
    return {
        "size": size,
        "ef_runtime": ef,
        "queries": n_queries,
        "rounds": rounds,
        "engine": module.name if module else "unknown",
        "check": check.public(),
        "listed": len(listed),
        "modes": {name: _summary(got) for name, got in out.items()},
    }


def _summary(got: dict[str, list[Any]]) -> dict[str, Any]:
    def cut(values: list[float]) -> dict[str, float]:
        ordered = sorted(values)
        return {
            "p50": statistics.median(ordered),
            "p95": ordered[int(0.95 * (len(ordered) - 1))],
        }

    return {"found": got["found"], "ms": cut(got["ms"]), "filtered_ms": cut(got["filtered_ms"])}


def table(result: dict[str, Any]) -> str:
    check = result["check"]
    lines = [
        f"{result['engine']}, {result['size']:,} random vectors at EF_RUNTIME "
        f"{result['ef_runtime']}: the check missed {check['missed']}, re-inserted "
        f"{check['reinserted']}, left {check['still_missed']} (listed {result['listed']})",
        "| list | listed found by their own vector | KNN p50 / p95 ms | with a project filter |",
        "| --- | --- | --- | --- |",
    ]
    for name, mode in result["modes"].items():
        lines.append(
            f"| {name} | {min(mode['found'])}-{max(mode['found'])} of {result['listed']} "
            f"| {mode['ms']['p50']:.2f} / {mode['ms']['p95']:.2f} "
            f"| {mode['filtered_ms']['p50']:.2f} / {mode['filtered_ms']['p95']:.2f} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.unreachable", description=__doc__)
    parser.add_argument("--size", type=int, default=5_000)
    parser.add_argument("--ef", type=int, default=10)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--listed", type=int, default=0, help="keep this many listed (0: all)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    started = datetime.now(UTC)
    result = {
        "started_at": started.isoformat(timespec="seconds"),
        "machine": system.machine(),
        "git": system.git_revision(),
        **run(args.size, args.ef, args.queries, args.rounds, args.listed),
    }
    args.out.mkdir(parents=True, exist_ok=True)
    shorter = f"-listed{args.listed}" if args.listed else ""
    path = args.out / f"{started:%Y%m%dT%H%M%SZ}-{result['engine']}{shorter}.json"
    path.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(table(result))
    print(f"wrote {path}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
