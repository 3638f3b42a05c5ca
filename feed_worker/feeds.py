"""The worker's feed jobs: one job per enabled feed of feeds.yml, rebuilt when the file changes.

A feed job is an adapter like the maintenance job: one engine call (``engine.feeds.run``), its
result counted in the metrics and shaped into the run's summary. A fetch that failed raises, so the
run is recorded as failed (and `kenning doctor` shows it); the backoff itself is the engine's.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from feed_worker.jobs import Job
from feed_worker.metrics import FeedMetrics
from kenning.core.errors import FeedError
from kenning.engine import Engine
from kenning.knowledge.feeds.config import Feed
from kenning.knowledge.feeds.ingest import JOB_PREFIX, job_name

PREFIX = JOB_PREFIX  # job names: feed:<name> (kenning.knowledge.feeds.ingest.job_name)
MAX_JITTER_SECONDS = 300.0


def feed_jobs(engine: Engine, metrics: FeedMetrics) -> list[Job]:
    """A job per enabled, valid feed; bad entries are left out (`kenning feeds list` shows them)."""
    return [_job(engine, feed, metrics) for feed in engine.feeds.book().feeds if feed.enabled]


def _job(engine: Engine, feed: Feed, metrics: FeedMetrics) -> Job:
    """Every interval, jittered by a tenth of it (at most 5 min); a run later than half an interval
    is dropped (the next one comes on time)."""
    seconds = feed.interval_minutes * 60
    return Job(
        job_name(feed.name),
        partial(ingest, engine, feed, metrics),
        seconds,
        jitter_seconds=min(MAX_JITTER_SECONDS, seconds / 10),
        misfire_grace_seconds=seconds / 2,
        signature=feed.model_dump_json(),
        # a feed whose URL changed is a new feed: its first fetch does not wait out the old one's
        at_once=engine.feeds.moved(feed),
    )


def ingest(engine: Engine, feed: Feed, metrics: FeedMetrics) -> dict[str, Any]:
    run = engine.feeds.run(feed)
    metrics.observe(run)
    if run.outcome == "failed":
        raise FeedError(
            run.error or "the fetch failed", hint="`kenning feeds list` shows the feed's state"
        )
    return run.summary()
