"""The floors a run's headlines are divided by (issue 21), measured in the
same run on the same inputs.

- ``recall``: per paraphrase query, interleaved (the box's drift hits all three alike): the query
  embedding alone, one bare KNN over the store (``FT.SEARCH`` KNN 10 on the one memory index, no
  filter, no pipeline, through the store's own client), and the engine's
  recall as the families make it;
- the embedding alone of the corpus's first texts against which the import's rate is read is
  measured interleaved with the import itself (``bench.import_rate``, the
  run's ``import.interleaved``).

``ratios(result)`` turns a result JSON into the ratio table's numbers (also for runs made by other
harnesses, e.g. the 1M scale point, when they hold the same fields).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bench import metrics
from bench.families import Query
from kenning.core.query import Search
from kenning.core.schema import vector_bytes
from kenning.store.client import call

if TYPE_CHECKING:
    from bench.run import Run

KNN = 10


def recall(run: Run, queries: list[Query]) -> dict[str, Any]:
    """Per query: embed alone, one bare KNN with that vector, then the engine
    recall; p50s and the ratio."""
    ctx = run.engine.ctx
    # the one index over every namespace: the bare KNN searches all of it, unfiltered
    index = ctx.index
    times: dict[str, list[float]] = {"embed": [], "bare_knn": [], "recall": []}
    for query in queries:
        start = time.perf_counter()
        vector = vector_bytes(ctx.embedder.embed(query.text))
        embedded = time.perf_counter()
        search = Search(
            index=index,
            knn=KNN,
            vector=vector,
            ef_runtime=max(ctx.settings.ef_runtime, KNN),
            return_fields=("distance",),
        )
        call(ctx.store.client.execute_command, *search.args())
        searched = time.perf_counter()
        run.recall(query, keep=False)
        times["embed"].append(embedded - start)
        times["bare_knn"].append(searched - embedded)
        times["recall"].append(time.perf_counter() - searched)
    out: dict[str, Any] = {
        name: metrics.latency_summary(samples) for name, samples in times.items()
    }
    out.update(
        {
            "index": index,
            "index_documents": _documents(run, index),
            "queries": len(queries),
            "recall_over_floor": _over(out["recall"], out["embed"], out["bare_knn"]),
        }
    )
    return out


def _documents(run: Run, index: str) -> int:
    reply = call(run.engine.ctx.store.client.execute_command, *Search(index=index, limit=0).args())
    return int(reply[0])


def _over(value: dict[str, float], *floors: dict[str, float]) -> float | None:
    total = sum(f.get("p50_ms", 0.0) for f in floors)
    return value["p50_ms"] / total if total > 0 and "p50_ms" in value else None


def ratios(result: dict[str, Any]) -> dict[str, float | None]:
    """The issue's ratios from one result (None where the run did not measure the inputs). Pure."""

    def get(*path: str) -> Any:
        data: Any = result
        for part in path:
            if not isinstance(data, dict) or part not in data:
                return None
            data = data[part]
        return data

    remember, remember_embed = (
        get("latency", "remember", "total", "p50_ms"),
        get("latency", "remember", "embed", "p50_ms"),
    )
    imported, embedded = import_rates(result)
    return {
        "recall_over_floor": get("floors", "recall", "recall_over_floor"),
        **_mcp(get),
        "bare_endpoint_minus_engine_ms": get(
            "mcp", "recall_paired", "added_by_bare_endpoint", "p50_ms"
        ),
        "remember_over_embed": remember / remember_embed if remember and remember_embed else None,
        "import_over_embedding_rate": imported / embedded if imported and embedded else None,
    }


def _mcp(get: Callable[..., Any]) -> dict[str, float | None]:
    """What MCP recall adds, p50 of the per-query differences: through fastmcp's ``Client`` (the
    unprefixed keys, as before), the official SDK's ``ClientSession`` and a bare
    JSON-RPC POST (the server alone)."""
    out: dict[str, float | None] = {}
    for client, prefix in (("", "mcp_"), ("_sdk", "mcp_sdk_"), ("_bare_post", "mcp_bare_post_")):
        out[f"{prefix}minus_engine_ms"] = get(
            "mcp", "recall_paired", f"added_by_mcp{client}", "p50_ms"
        )
        out[f"{prefix}minus_bare_endpoint_ms"] = get(
            "mcp", "recall_paired", f"mcp{client}_minus_bare_endpoint", "p50_ms"
        )
    return out


def import_rates(result: dict[str, Any]) -> tuple[float | None, float | None]:
    """(import, embedding-only) texts per second: the interleaved rounds'
    (``bench.import_rate``), else, for runs made before them, the whole import's and the separate
    embedding pass's (minutes apart). Pure."""
    interleaved = result.get("import", {}).get("interleaved")
    if isinstance(interleaved, dict):
        return interleaved["import"]["texts_per_second"], interleaved["embedding"][
            "texts_per_second"
        ]
    embedded = result.get("floors", {}).get("embedding_rate", {}).get("texts_per_second")
    return result.get("import", {}).get("memories_per_second"), embedded
