"""One benchmark run: a private embedded Valkey, the corpus imported in bulk, every family, latency,
throughput and memory. Returns plain data (the JSON of the run).

Never touches the user's Valkey: the server runs in a temporary data dir on a free port and is
stopped at the end. The embedder is the configured one (``KENNING_EMBEDDING_BACKEND``), loaded once.
"""

from __future__ import annotations

import random
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from bench import (
    contradictions,
    diagnostics,
    families,
    floors,
    import_rate,
    lifecycle,
    mcp,
    metrics,
    system,
)
from bench.corpus import generate
from bench.families import Query, Write
from bench.instrument import Stopwatch, TimedEmbedder, TimedMemoryStore
from bench.run import ACTOR, Run, RunConfig, free_port
from kenning.core.models import RememberResult
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.bulk import Bulk
from kenning.memory.memories import Draft
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder
from kenning.store import connect, search_module


def execute(
    config: RunConfig, embedder: Embedder, base: Settings, progress: Callable[[str], None] = print
) -> dict[str, Any]:
    """The whole run; the returned dict is what bench/results/*.json holds."""
    corpus = generate(config.size, config.seed)
    with tempfile.TemporaryDirectory(prefix="kenning-bench-") as tmp:
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
            for name, value in config.valkey_config:
                client.config_set(name, value)
            watch = Stopwatch()
            engine = Engine.open(settings, client, TimedEmbedder(embedder, watch))
            engine.ctx.store.memories = TimedMemoryStore(engine.ctx.store.memories, watch)
            run = Run(engine, watch, corpus, config)
            out: dict[str, Any] = {
                "corpus": {
                    "size": config.size,
                    "seed": config.seed,
                    "items": len(corpus.items),
                    "projects": len(corpus.projects()),
                },
                "valkey_config": dict(config.valkey_config),
            }
            out["search_module"] = _search_module(client)
            progress(
                f"search module: {out['search_module']['name']} {out['search_module']['version']}"
            )
            progress(f"importing {len(corpus.items)} memories")
            out["import"] = import_corpus(run, client)
            out["families"] = run_families(run, progress)
            progress("diagnostics: relevance floor sweep")
            out["diagnostics"] = {
                "paraphrase_floor_sweep": diagnostics.floor_sweep(
                    run, run.queries["b"], run.queries["g"]
                ),
                "valkey_commands_per_recall": diagnostics.commands_per_call(
                    run, client, run.queries["b"][:50]
                ),
            }
            out["latency"] = latency(run)
            progress("throughput")
            out["throughput"] = throughput(run)
            progress(
                "floors: the query embedding alone, one bare KNN, the engine recall (same queries)"
            )
            out["floors"] = {"recall": floors.recall(run, run.queries["b"])}
            progress("MCP over HTTP")
            out["mcp"] = mcp.measure(run, settings, config.mcp_calls)
            out["memory"] = {
                "valkey_rss_mb": system.rss_mb(server.process.pid if server.process else None),
                "bench_process_rss_mb": system.rss_mb(),
            }
            progress("server process RSS probe")
            out["memory"]["server_probe"] = lifecycle.server_probe(settings)
            out["families"].update(lifecycle.run_all(run, progress))
            client.close()  # type: ignore[no-untyped-call]
    return out


def _search_module(client: Any) -> dict[str, str]:
    """Which engine this run measured (valkey-search or RediSearch), for the page's columns."""
    found = search_module.detect(client)
    assert found is not None  # Engine.open refused a server without one
    return {"name": found.name, "version": found.version}


def import_corpus(run: Run, client: Any) -> dict[str, Any]:
    drafts = [
        Draft(i.content, namespace=i.namespace, project=i.project, tags=i.tags, kind=i.kind)
        for i in run.corpus.items
    ]
    before = system.used_memory(client)
    results: list[RememberResult] = []
    load = system.machine()["load_average"]
    steal = system.cpu_times()
    rate = import_rate.interleave(
        drafts,
        {
            import_rate.EMBEDDING: import_rate.embedding_only(run.engine.ctx.embedder),
            import_rate.IMPORT: import_rate.importing(run.engine, ACTOR, into=results),
        },
    )
    rate["machine"] = {
        "load_average": load,
        "load_average_end": system.machine()["load_average"],
        "cpu_steal_percent": system.steal_percent(steal, system.cpu_times()),
    }
    start = time.perf_counter()
    results += Bulk(run.engine.ctx, run.engine.memories).remember_many(
        drafts[len(results) :], actor=ACTOR
    )
    seconds = time.perf_counter() - start + rate[import_rate.IMPORT]["seconds"]
    after = system.used_memory(client)
    stored = 0
    for item, result in zip(run.corpus.items, results, strict=True):
        run.key_of[item.uid] = result.key
        if result.status == "stored":
            run.uid_of[result.key] = item.uid
            stored += 1
    return {
        "seconds": seconds,
        "stored": stored,
        "duplicates_refused": len(results) - stored,
        "memories_per_second": len(results) / seconds,
        "valkey_used_memory_delta": after - before,
        "bytes_per_memory": (after - before) / max(stored, 1),
        "breakdown": breakdown(run, client, list(run.uid_of)[:200], stored, after - before),
        "interleaved": rate,
    }


def breakdown(run: Run, client: Any, keys: list[str], stored: int, delta: int) -> dict[str, float]:
    """MEMORY USAGE of sampled memory hashes and their audit entries; the index is what remains."""
    audit = run.engine.store.audit

    def usage(key: str) -> int:
        return int(client.memory_usage(key, samples=0) or 0)

    hash_bytes = sum(usage(k) for k in keys) / max(len(keys), 1)
    history = sum(usage(audit.events_key(k)) + usage(audit.history_key(k)) for k in keys) / max(
        len(keys), 1
    )
    audit_bytes = history + usage(audit.stream) / max(stored, 1)
    return {
        "hash_bytes": hash_bytes,
        "audit_bytes": audit_bytes,
        "index_and_other_bytes": delta / max(stored, 1) - hash_bytes - audit_bytes,
        "sampled": float(len(keys)),
    }


def run_families(run: Run, progress: Callable[[str], None]) -> dict[str, Any]:
    rng = random.Random(f"families:{run.config.seed}")
    n = run.config.queries
    out: dict[str, Any] = {}
    builders: Sequence[tuple[str, Callable[[], list[Query]]]] = (
        ("a", lambda: families.verbatim_queries(run.corpus, rng, n)),
        ("b", lambda: families.paraphrase_queries(run.corpus, rng, n)),
        ("h", lambda: families.identifier_queries(run.corpus, rng, n)),
    )
    for name, build in builders:
        progress(f"family {name}: {families.FAMILIES[name]}")
        queries = run.queries[name] = build()
        ranks = [metrics.first_rank(run.recall(q), q.targets) for q in queries]
        out[name] = metrics.retrieval_summary(ranks)
        out[name]["misses_at_5"] = [
            {"query": q.text, "target": q.targets[0], "rank": r}
            for q, r in zip(queries, ranks, strict=True)
            if r is None or r > 5
        ][:12]
    progress("family c: cross-project distractors")
    out["c"] = distractors(run, families.distractor_queries(run.corpus, rng, n))
    progress("family g: no-answer")
    run.queries["g"] = families.no_answer_queries(run.corpus, rng)
    answers = [run.recall(q) for q in run.queries["g"]]
    out["g"] = {
        "abstention": metrics.abstention([len(a) for a in answers]),
        "n": float(len(answers)),
    }
    progress("family f: near-duplicate writes")
    out["f"] = duplicates(run, families.duplicate_writes(run.corpus, rng, run.config.writes))
    progress("family j: contradictions (labelled pairs, pure and through remember)")
    out["j"] = contradictions.family(run.engine)
    return out


def distractors(run: Run, queries: list[Query]) -> dict[str, Any]:
    """With the project filter the twin must never come back; without it
    (the control) it competes."""
    filtered = [run.recall(q) for q in queries]
    control = [run.recall(q, filtered=False, keep=False) for q in queries]
    other_projects = [
        [u for u in got if _project(u) not in (q.project, "global")]
        for got, q in zip(filtered, queries, strict=True)
    ]
    summary = metrics.retrieval_summary(
        [metrics.first_rank(g, q.targets) for g, q in zip(filtered, queries, strict=True)]
    )
    summary["twin_leak_rate"] = metrics.leak_rate(filtered, [q.avoid for q in queries])
    summary["other_project_leak_rate"] = sum(1 for o in other_projects if o) / max(len(queries), 1)
    summary["control_unfiltered_other_project_in_top10"] = sum(
        1
        for got, q in zip(control, queries, strict=True)
        if any(_project(u) not in (q.project, "global") for u in got)
    ) / max(len(queries), 1)
    return summary


def _project(uid: str) -> str:
    return uid.split("/", 1)[0]


def duplicates(run: Run, writes: list[Write]) -> dict[str, Any]:
    refused = [run.remember(w).status == "duplicate" for w in writes]
    precision, recall = metrics.precision_recall(
        refused, [w.duplicate_of is not None for w in writes]
    )
    return {
        "precision": precision,
        "recall": recall,
        "n": float(len(writes)),
        "threshold": run.engine.ctx.settings.duplicate_threshold,
    }


def latency(run: Run) -> dict[str, Any]:
    def split(samples: list[dict[str, float]]) -> dict[str, Any]:
        out: dict[str, Any] = {
            phase: metrics.latency_summary([s.get(phase, 0.0) for s in samples])
            for phase in ("total", "embed", "search", "rest")
        }
        out["search_calls_mean"] = sum(s.get("search_calls", 0.0) for s in samples) / max(
            len(samples), 1
        )
        return out

    return {"recall": split(run.recall_phases), "remember": split(run.remember_phases)}


def throughput(run: Run) -> dict[str, Any]:
    rng = random.Random(f"throughput:{run.config.seed}")
    queries = families.paraphrase_queries(run.corpus, rng, run.config.throughput_requests)
    out: dict[str, Any] = {}
    for clients in run.config.clients:
        start = time.perf_counter()
        with ThreadPoolExecutor(clients) as pool:
            list(pool.map(lambda q: run.recall(q, keep=False), queries))
        seconds = time.perf_counter() - start
        out[f"{clients}_clients"] = {
            "recalls_per_second": len(queries) / seconds,
            "requests": len(queries),
        }
    return out
