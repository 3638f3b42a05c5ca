"""`kenning bench --llm`: the mechanics of the LLM extras against a scripted local model server
(bench/model_server.py), on a private embedded Valkey holding the 1k corpus.

- Query expansion: per query, interleaved (the box drifts; docs/PERF-NOTES), a recall with expansion
  off, the first recall with it on (cold: the model is asked, the answer cached) and a second one
  (cached). Reported: p50/p95 of each and the added milliseconds against the off recall beside it.
- The enrichment queue: memories remembered with fact extraction on queue one job each; the queue is
  drained and timed: jobs per second (one model call each, its facts
  remembered through the write path).

The server answers at once unless ``model_ms`` says otherwise: what is measured is Kenning's side.
What a real model adds in time and quality is left to users with a key (docs/llm.md).
"""

from __future__ import annotations

import json
import logging
import statistics
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from bench import system
from bench.corpus import generate
from bench.main import QUIET
from bench.model_server import scripted_model
from bench.run import free_port
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.bulk import Bulk
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder, load_embedder, resolve_backend
from kenning.store import connect

# a folder of its own: bench/report.py reads the runs above
RESULTS = system.ROOT / "bench" / "results" / "llm"
ACTOR = "bench"
QUEUE_JOBS = 200
DRAIN_BATCH = 50


def run(settings: Settings, *, queries: int, model_ms: float, out: Path | None) -> int:
    for name in QUIET:  # one line per model request would drown the result
        logging.getLogger(name).setLevel(logging.WARNING)
    settings = settings.model_copy(update={"embedding_backend": resolve_backend(settings)})
    embedder = load_embedder(settings)
    print(
        f"kenning bench --llm: {queries} queries, {QUEUE_JOBS} queue jobs, "
        f"model server {model_ms:g} ms",
        flush=True,
    )
    result: dict[str, Any] = {
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": system.machine(),
        "git": system.git_revision(),
        "embedding_backend": settings.embedding_backend,
        "model_ms": model_ms,
    }
    result.update(measure(settings, embedder, queries=queries, model_ms=model_ms))
    folder = out or RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    path = (
        folder
        / f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-llm-{settings.embedding_backend}.json"
    )
    path.write_text(json.dumps(result, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    print(json.dumps({k: result[k] for k in ("expansion", "queue")}, indent=2), flush=True)
    print(f"wrote {path}", flush=True)
    return 0


def measure(base: Settings, embedder: Embedder, *, queries: int, model_ms: float) -> dict[str, Any]:
    corpus = generate("1k", 7)
    kept, queued = corpus.items[:-QUEUE_JOBS], corpus.items[-QUEUE_JOBS:]
    with (
        tempfile.TemporaryDirectory(prefix="kenning-bench-llm-") as tmp,
        scripted_model(model_ms / 1000) as model,
    ):
        settings = base.model_copy(
            update={
                "data_dir": Path(tmp),
                "valkey_port": free_port(),
                "key_prefix": "bench:",
                "valkey_url": None,
                "anthropic_api_key": SecretStr("bench-not-a-key"),
                "anthropic_base_url": model.url,
                "llm_contradiction_verdicts": False,
                "llm_extract_facts": False,
                "query_expansion": False,
            }
        )
        with EmbeddedValkey(settings):
            client = connect(settings)
            plain = Engine.open(settings, client, embedder)
            drafts = [Draft(i.content, namespace=i.namespace, project=i.project) for i in kept]
            Bulk(plain.ctx, plain.memories).remember_many(drafts, actor=ACTOR)
            expanding = Engine.open(
                settings.model_copy(update={"query_expansion": True}), client, embedder
            )
            texts = list(dict.fromkeys(" ".join(item.content.split()[:9]) for item in kept))[
                :queries
            ]
            out: dict[str, Any] = {"expansion": expansion(plain, expanding, texts)}
            extracting = Engine.open(
                settings.model_copy(update={"llm_extract_facts": True}), client, embedder
            )
            out["queue"] = queue(extracting, [i.content for i in queued])
            out["model_requests"] = model.answered
            client.close()  # type: ignore[no-untyped-call]
    return out


def expansion(plain: Engine, expanding: Engine, texts: list[str]) -> dict[str, Any]:
    samples: dict[str, list[float]] = {"off": [], "cold": [], "cached": []}
    reported: dict[str, list[float]] = {"cold": [], "cached": []}
    for text in texts:
        request = RecallRequest(text, top_k=10, actor=ACTOR)
        samples["off"].append(_timed(plain.recaller.recall, request)[0])
        for phase in ("cold", "cached"):
            seconds, result = _timed(expanding.recaller.recall, request)
            if result.expansion is None or result.expansion.cached != (phase == "cached"):
                raise RuntimeError(
                    f"{text!r}: expected a {phase} expansion, got {result.expansion}"
                )
            samples[phase].append(seconds)
            reported[phase].append(result.expansion.seconds)
    off = samples["off"]
    out: dict[str, Any] = {
        "queries": len(texts),
        **{f"{k}_ms": _percentiles(v) for k, v in samples.items()},
    }
    for phase in ("cold", "cached"):
        added = [s - o for s, o in zip(samples[phase], off, strict=True)]
        out[f"{phase}_added_ms_p50"] = round(statistics.median(added) * 1000, 2)
        out[f"{phase}_reported_ms_p50"] = round(statistics.median(reported[phase]) * 1000, 2)
        out[f"{phase}_ratio_to_off_p50"] = round(
            statistics.median(samples[phase]) / statistics.median(off), 2
        )
    return out


def queue(engine: Engine, texts: list[str]) -> dict[str, Any]:
    start = time.perf_counter()
    for text in texts:
        engine.memories.remember(Draft(text + " (queued copy)", namespace="episodic"), actor=ACTOR)
    pushed = time.perf_counter() - start
    waiting = engine.enrichment.status().waiting
    done = facts = 0
    start = time.perf_counter()
    while True:
        report = engine.enrichment.drain("bench", limit=DRAIN_BATCH)
        if report.claimed == 0:
            break
        done, facts = done + report.done, facts + report.facts_stored
    seconds = time.perf_counter() - start
    return {
        "jobs_queued": waiting,
        "jobs_done": done,
        "facts_stored": facts,
        "drain_seconds": round(seconds, 2),
        "jobs_per_second": round(done / seconds, 1),
        "remember_with_push_ms": round(pushed / len(texts) * 1000, 2),
        "left": engine.enrichment.status().public(),
    }


def _timed(fn: Callable[[RecallRequest], Any], request: RecallRequest) -> tuple[float, Any]:
    start = time.perf_counter()
    value = fn(request)
    return time.perf_counter() - start, value


def _percentiles(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {
        "p50": round(statistics.median(ordered) * 1000, 2),
        "p95": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000, 2),
    }
