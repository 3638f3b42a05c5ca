"""Entry point of `kenning bench`: load the embedder once, run, write the JSON and the docs page."""

from __future__ import annotations

import json
import logging
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bench import floors, load, report, scale, system
from bench.run import RunConfig
from bench.runner import execute
from bench.scale_vectors import SCALE_SIZES
from kenning.core.settings import Settings
from kenning.runtime.embedding import load_embedder, resolve_backend
from kenning.store.search_module import REDISEARCH

RESULTS = system.ROOT / "bench" / "results"
SETTINGS_RECORDED = (
    "embedding_backend",
    "embedding_threads",
    "embedding_batch_size",
    "ef_runtime",
    "duplicate_threshold",
    "relevance_floor",
    "weak_match_margin",
    "lexical_boost",
)


QUIET = ("httpx", "httpx2", "mcp", "uvicorn", "uvicorn.error", "fastmcp", "kenning.ops.embedded")


def progress(line: str) -> None:
    print(f"  {datetime.now(UTC):%H:%M:%S} {line}", flush=True)


def run(
    settings: Settings,
    *,
    size: str,
    seed: int,
    out: Path | None,
    queries: int,
    docs: bool,
    valkey_config: tuple[tuple[str, str], ...] = (),
) -> int:
    started = time.perf_counter()
    cpu_before = system.cpu_times()
    for name in QUIET:  # one line per HTTP request would drown the progress lines
        logging.getLogger(name).setLevel(logging.WARNING)
    # every run starts a fresh store, so `auto` is what a new store gets;
    # record the concrete backend
    settings = settings.model_copy(update={"embedding_backend": resolve_backend(settings)})
    print(
        f"kenning bench: {size} corpus, seed {seed}, embedder backend {settings.embedding_backend}",
        flush=True,
    )
    load_start = time.perf_counter()
    embedder = load_embedder(settings)
    loaded = time.perf_counter() - load_start
    config = RunConfig(size=size, seed=seed, queries=queries, valkey_config=valkey_config)
    result: dict[str, Any] = {
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": system.machine(),
        "git": system.git_revision(),
        "settings": {name: getattr(settings, name, None) for name in SETTINGS_RECORDED},
        "embedder": {
            "model": embedder.model_name,
            "dimension": embedder.dimension,
            "load_seconds": loaded,
        },
    }
    # a scale point: precomputed vectors, no quality families (bench/scale.py)
    if size in SCALE_SIZES:
        result.update(
            scale.execute(
                SCALE_SIZES[size],
                embedder,
                settings,
                seed=seed,
                queries=queries,
                progress=progress,
                label=size,
            )
        )
    else:
        result.update(execute(config, embedder, settings, progress=progress))
    result["wall_seconds"] = time.perf_counter() - started
    result["machine"]["cpu_steal_percent"] = system.steal_percent(cpu_before, system.cpu_times())
    result["machine"]["load_average_end"] = system.machine()["load_average"]
    result["ratios"] = floors.ratios(result)
    folder = out or RESULTS
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    variant = "-valkey-" + "-".join(f"{k}={v}" for k, v in valkey_config) if valkey_config else ""
    if result.get("search_module", {}).get("name") not in (None, REDISEARCH):
        variant = f"-{result['search_module']['name']}{variant}"
    path = folder / f"{stamp}-{size}-{settings.embedding_backend}{variant}.json"
    path.write_text(
        json.dumps(result, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8"
    )
    print(f"wrote {path} ({result['wall_seconds']:.0f} s)", flush=True)
    if docs:
        written = report.write(folder)
        print(f"wrote {', '.join(str(p) for p in written)}", flush=True)
    return 0


def run_load(settings: Settings, config: load.LoadConfig, *, out: Path | None, docs: bool) -> int:
    """``kenning bench --load``: load the embedder once, run, write the JSON (and the page)."""
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
    settings = settings.model_copy(update={"embedding_backend": resolve_backend(settings)})
    embedder = load_embedder(settings)
    started = time.perf_counter()
    cpu = system.cpu_times()
    result: dict[str, Any] = {
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": system.machine(),
        "git": system.git_revision(),
        "embedding_backend": settings.embedding_backend,
    }
    result.update(load.execute(config, embedder, settings, progress=progress))
    result["wall_seconds"] = time.perf_counter() - started
    result["machine"]["cpu_steal_percent"] = system.steal_percent(cpu, system.cpu_times())
    result["machine"]["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    path = load.write(result, out or load.RESULTS)
    print("\n".join(load.render(result)))
    print(f"wrote {path}", flush=True)
    if docs:
        written = report.write(RESULTS)
        print(f"wrote {', '.join(str(p) for p in written)}", flush=True)
    return 0
