"""Why a family misses: the raw vector ranking, outside the recall pipeline.

For each query the harness embeds the text and runs the same KNN (project + global filter, active
memories, every namespace) the pipeline runs, then ranks by raw similarity. Sweeping the relevance
floor over those numbers shows the trade-off between paraphrase recall and no-answer abstention that
the single setting ``KENNING_RELEVANCE_FLOOR`` decides.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from bench import metrics
from bench.corpus import GLOBAL
from bench.families import Query
from kenning.core import query as q
from kenning.core.schema import NAMESPACES, vector_bytes

if TYPE_CHECKING:
    from bench.run import Run

FLOORS = (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4)
K = 10


def ranked(run: Run, query: Query) -> list[tuple[str, float]]:
    """(uid, similarity) of the K nearest active memories of the query's
    project and global, best first."""
    vector = vector_bytes(run.engine.ctx.embedder.embed(query.text))
    clauses = [q.tag("state", ["active"])]
    if query.project:
        clauses.append(q.tag("project", [query.project, GLOBAL]))
    search = q.Search(
        index=run.engine.ctx.index,
        namespaces=NAMESPACES,
        clauses=tuple(clauses),
        knn=K,
        vector=vector,
        ef_runtime=max(run.engine.ctx.settings.ef_runtime, K),
        return_fields=("created_at", "distance"),
        limit=K,
    )
    out = [
        (run.uid_of.get(h.memory.key, h.memory.key), h.similarity)
        for h in run.engine.store.memories.search(search).hits
    ]
    return sorted(out, key=lambda pair: pair[1], reverse=True)[:K]


def floor_sweep(run: Run, answerable: list[Query], unanswerable: list[Query]) -> dict[str, Any]:
    """Vector-only recall@5 of answerable queries and abstention of unanswerable ones, per floor."""
    found = [ranked(run, x) for x in answerable]
    empty = [ranked(run, x) for x in unanswerable]
    target_sims = [
        next((s for u, s in got if u in x.targets), None)
        for got, x in zip(found, answerable, strict=True)
    ]
    rows = []
    for floor in FLOORS:
        ranks = [
            metrics.first_rank([u for u, s in got if s >= floor], x.targets)
            for got, x in zip(found, answerable, strict=True)
        ]
        rows.append(
            {
                "floor": floor,
                "recall@5": metrics.recall_at(ranks, 5),
                "abstention": metrics.abstention(
                    [sum(1 for _, s in got if s >= floor) for got in empty]
                ),
            }
        )
    known = [s for s in target_sims if s is not None]
    tops = [got[0][1] for got in empty if got]
    return {
        "sweep": rows,
        "target_similarity_p50": metrics.percentile(known, 50),
        "target_similarity_p10": metrics.percentile(known, 10),
        "target_outside_top10": sum(1 for s in target_sims if s is None) / max(len(target_sims), 1),
        "no_answer_top_similarity_p50": metrics.percentile(tops, 50),
        "no_answer_top_similarity_p90": metrics.percentile(tops, 90),
    }


def commands_per_call(run: Run, client: Any, calls: list[Query]) -> dict[str, float]:
    """Valkey commands per recall by command name (INFO commandstats before
    and after), busiest first."""

    def stats() -> dict[str, int]:
        raw: Any = client.info("commandstats")
        return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in raw.items()}

    before = stats()
    for query in calls:
        run.recall(query, keep=False)
    after = stats()
    per_call = {
        name: (count - before.get(name, 0)) / max(len(calls), 1) for name, count in after.items()
    }
    per_call.pop("info", None)  # the harness's own INFO calls
    return dict(sorted(((k, v) for k, v in per_call.items() if v > 0), key=lambda kv: -kv[1]))
