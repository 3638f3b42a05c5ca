"""Families that change the store -- (d) superseded, (e) suppressed and forgotten, (i) graveyard --
and the server-side measurements (RSS probe, MCP over HTTP). They run after the read-only families.

Each family first shows the thing it later hides is found (the positive control), then hides it and
counts leaks. A family whose engine API is missing is reported as "not measured: <reason>".
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from bench import families, metrics, system
from bench.corpus import GLOBAL, Item
from bench.families import Query, Write, near_verbatim
from kenning.core.settings import Settings

if TYPE_CHECKING:
    from bench.run import Run

PROBE_RECALLS = 30
GRAVEYARD = {  # scenario -> (approach name as recorded, a plan that names it, a plan that does not)
    "exp-celery": (
        "Celery beat",
        "Let's schedule the nightly jobs with Celery beat.",
        "Let's schedule the nightly jobs with a cron-driven worker.",
    ),
    "exp-graphql": (
        "GraphQL",
        "Should we put a GraphQL API in front of the service?",
        "Should we add sparse fieldsets to the REST API?",
    ),
    "exp-k8s": (
        "Kubernetes",
        "Plan: move the service onto Kubernetes next quarter.",
        "Plan: move the service onto a bigger VM next quarter.",
    ),
    "exp-mongo": (
        "MongoDB",
        "Could we store the event stream in MongoDB?",
        "Could we store the event stream in Postgres JSONB?",
    ),
    "exp-microfe": (
        "micro-frontends",
        "Split the admin UI into micro-frontends per team.",
        "Split the admin UI routes into lazily loaded chunks.",
    ),
    "exp-orm-cache": (
        "second-level ORM cache",
        "Add a second-level ORM cache to speed up pricing.",
        "Add a database index to speed up pricing.",
    ),
}


def not_measured(reason: str) -> dict[str, Any]:
    return {"not_measured": reason}


def run_all(run: Run, progress: Callable[[str], None]) -> dict[str, Any]:
    rng = random.Random(f"lifecycle:{run.config.seed}")
    pool = [
        i for i in run.corpus.items if i.scenario and i.project != GLOBAL and i.uid in run.key_of
    ]
    rng.shuffle(pool)
    out: dict[str, Any] = {}
    steps: tuple[tuple[str, str, Callable[[], dict[str, Any]]], ...] = (
        ("i", "graveyard warnings", lambda: graveyard(run, rng)),
        (
            "d",
            "superseded facts",
            lambda: superseded(run, [i for i in pool if (i.scenario or "")[:4] == "pin-"][:40]),
        ),
        (
            "e",
            "suppressed & forgotten",
            lambda: {
                "forgotten": forgotten(run, [i for i in pool if i.ident is None][:40]),
                "suppressed": suppressed(run),
            },
        ),
    )
    for name, label, step in steps:
        progress(f"family {name}: {label}")
        try:
            out[name] = step()
        # an engine API this family needs has not landed
        except (AttributeError, ImportError) as exc:
            out[name] = not_measured(f"engine API missing: {exc}")
    return out


def _found(run: Run, queries: list[Query]) -> list[list[str]]:
    return [run.recall(q, keep=False) for q in queries]


def forgotten(run: Run, items: list[Item]) -> dict[str, Any]:
    queries = [Query("e", near_verbatim(i), i.project, (i.uid,)) for i in items]
    before = _found(run, queries)
    for item in items:
        run.engine.memories.forget(
            run.key_of[item.uid], confirm=True, actor="bench", reason="benchmark: forget"
        )
    after = _found(run, queries)
    return {
        "control_found_before@10": metrics.recall_at(
            [metrics.first_rank(b, q.targets) for b, q in zip(before, queries, strict=True)], 10
        ),
        "leak_rate": metrics.leak_rate(after, [q.targets for q in queries]),
        "n": float(len(queries)),
    }


def suppressed(run: Run) -> dict[str, Any]:
    """Suppress a vendor name; no memory that names it may come back, by any query."""
    term = "Klarna"
    hidden = [
        i
        for i in run.corpus.items
        if re.search(rf"\b{term}\b", i.content) and i.uid in run.uid_of.values()
    ]
    queries = [Query("e", near_verbatim(i), i.project, (i.uid,)) for i in hidden[:40]]
    queries += [Query("e", f"{term} API quirks", i.project, (i.uid,)) for i in hidden[:20]]
    before = _found(run, queries)
    run.engine.suppressions.suppress(term, "benchmark: the vendor contract ended", actor="bench")
    after = _found(run, queries)
    forbidden = [tuple(i.uid for i in hidden)] * len(queries)
    return {
        "term": term,
        "memories_hidden": len(hidden),
        "control_found_before@10": metrics.recall_at(
            [metrics.first_rank(b, q.targets) for b, q in zip(before, queries, strict=True)], 10
        ),
        "leak_rate": metrics.leak_rate(after, forbidden),
        "n": float(len(queries)),
    }


def superseded(run: Run, pins: list[Item]) -> dict[str, Any]:
    """A newer pin replaces the old one; after the supersede the old one must not come back."""
    queries = [Query("d", near_verbatim(i), i.project, (i.uid,)) for i in pins]
    before = _found(run, queries)
    kept: list[int] = []
    for index, item in enumerate(pins):
        text = (
            f"Update: {item.content.split(':')[0].strip('`')} no longer applies; we "
            "moved to the latest release."
        )
        written = run.remember(Write(text, item.project, item.namespace, None, item.uid))
        if written.status != "stored":
            continue
        kept.append(index)
        run.engine.belief.supersede(
            run.engine.memories.get(run.key_of[item.uid]),
            run.engine.memories.get(written.key),
            actor="bench",
            reason="benchmark: a newer pin replaced it",
        )
    queries = [queries[i] for i in kept]
    before = [before[i] for i in kept]
    after = _found(run, queries)
    return {
        "control_found_before@10": metrics.recall_at(
            [metrics.first_rank(b, q.targets) for b, q in zip(before, queries, strict=True)], 10
        ),
        "leak_rate": metrics.leak_rate(after, [q.targets for q in queries]),
        "n": float(len(queries)),
    }


def graveyard(run: Run, rng: random.Random) -> dict[str, Any]:
    """Record abandoned approaches on experience memories; plans naming one
    must warn, others must not."""
    from kenning.memory.experience import Approach, Report

    carriers = [
        i for i in run.corpus.items if i.scenario in GRAVEYARD and i.uid in run.uid_of.values()
    ][:200]
    naming = [Query("i", GRAVEYARD[i.scenario or ""][1], i.project) for i in carriers[:30]]
    plain = [Query("i", GRAVEYARD[i.scenario or ""][2], i.project) for i in carriers[:30]]
    control = sum(1 for q in naming if _warnings(run, q))
    for item in carriers:
        name = GRAVEYARD[item.scenario or ""][0]
        report = Report(
            effort=2,
            outcome="abandoned",
            abandoned_approaches=(Approach(name, "approach", "bench"),),
        )
        run.engine.experience.record_experience(run.key_of[item.uid], report, actor="bench")
    warned = sum(1 for q in naming if _warnings(run, q))
    false = sum(1 for q in plain if _warnings(run, q))
    return {
        "warn_rate": warned / max(len(naming), 1),
        "false_warning_rate": false / max(len(plain), 1),
        "control_warnings_before": control,
        "recorded": len(carriers),
        "n": float(len(naming)),
    }


def _warnings(run: Run, query: Query) -> int:
    from kenning.memory.recall import RecallRequest

    result = run.engine.recaller.recall(
        RecallRequest(query.text, projects=[query.project or GLOBAL], top_k=5)
    )
    return len(result.warnings)


def server_probe(settings: Settings) -> dict[str, Any]:
    """RSS of a fresh process that runs what `kenning up` runs beside Valkey (embedder, engine, MCP
    server, worker) and serves some recalls; the bench process itself carries
    the corpus and the harness.

    The probe uses its own key prefix on the bench's Valkey: a worker's first maintenance run over
    the corpus would change the store the later families measure (and take minutes at 100k). The
    process's memory does not grow with the store, which lives in Valkey (measured separately).
    """
    from bench.run import free_port

    env = system.child_env(
        settings,
        KENNING_KEY_PREFIX=settings.key_prefix + "probe:",
        KENNING_MCP_PORT=str(free_port()),
    )
    done = subprocess.run(
        [sys.executable, "-m", "bench.probe", str(PROBE_RECALLS)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    if done.returncode != 0:
        return not_measured(f"probe failed: {done.stderr.strip()[-300:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def paraphrases(run: Run, n: int) -> list[Query]:
    return families.paraphrase_queries(run.corpus, random.Random(f"mcp:{run.config.seed}"), n)
