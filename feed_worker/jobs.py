"""Every job the worker schedules, registered in one place (``scheduled``).

A job is an adapter like a tool or a route: one engine call, its result shaped into a small summary
that is recorded as the run's outcome. Domain rules stay in the engine (``engine.maintenance.run``
decides what expires, what is a duplicate, what drifted).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from kenning.core.settings import Settings
from kenning.engine import Engine

MAINTENANCE = "maintenance"
ENRICHMENT = "enrichment"
# who the audit log names for what the worker's maintenance did
MAINTENANCE_ACTOR = "worker:maintenance"


@dataclass(frozen=True)
class Job:
    """``run`` does the work and returns the summary recorded for the run; it raises on failure.

    ``jitter_seconds`` spreads runs (feeds on one interval do not all fetch at once);
    ``misfire_grace_seconds`` drops a run that comes later than that (None: never dropped);
    ``signature`` tells a changed job from an unchanged one when the worker reloads its jobs."""

    name: str
    run: Callable[[], dict[str, Any]]
    interval_seconds: float
    jitter_seconds: float = 0.0
    misfire_grace_seconds: float | None = None
    signature: str = ""
    at_once: bool = False  # the first run comes now, whatever the last recorded run says


def scheduled(engine: Engine, settings: Settings, consumer: str = "worker") -> list[Job]:
    """The worker's fixed jobs and how often each runs (the feed jobs follow feeds.yml:
    feed_worker.feeds); the enrichment queue only when the LLM extras are on."""
    jobs = [
        Job(MAINTENANCE, partial(maintenance, engine), settings.maintenance_interval_minutes * 60)
    ]
    if engine.llm.available:
        jobs.append(
            Job(
                ENRICHMENT,
                partial(enrichment, engine, consumer),
                settings.enrichment_interval_seconds,
            )
        )
    return jobs


def enrichment(engine: Engine, consumer: str) -> dict[str, Any]:
    """Drain the enrichment queue once (jobs a dead worker left behind first)."""
    return engine.enrichment.drain(consumer).public()


def maintenance(engine: Engine) -> dict[str, Any]:
    """One maintenance pass (the same call as `kenning maintain`); the full report is kept by the
    engine as the last maintenance report, so the run records counts only."""
    report = engine.maintenance.run(actor=MAINTENANCE_ACTOR)
    return {
        "expired": report.expired.count,
        "duplicate_clusters": report.duplicates.clusters,
        "merged": len(report.duplicates.merged),
        "contradictions_examined": report.contradictions.examined,
        "contradictions_closed": len(report.contradictions.closed),
        "index_drift": len(report.indexes.drift),
        "phantoms": report.indexes.phantoms,
    }
