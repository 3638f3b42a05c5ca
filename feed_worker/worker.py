"""The worker: APScheduler running every registered job, only while this worker leads.

One leader lease (``kenning.ops.jobs``) covers the whole worker: a renewal job keeps it (every
third of
KENNING_WORKER_LOCK_TTL_SECONDS, also while a long job runs), each job run checks it first, and
``stop`` releases it. Two workers on one store therefore never run the same job at once; when the
leader dies, another takes over once the lease expires. Also a ``Service`` of `kenning up` (the
scheduler runs in its own thread).
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from apscheduler.schedulers.background import BackgroundScheduler
from prometheus_client import CollectorRegistry

from feed_worker.feeds import PREFIX, feed_jobs
from feed_worker.guard import guarded
from feed_worker.jobs import Job, scheduled
from feed_worker.metrics import FeedMetrics
from kenning.core.errors import InvalidInput, KenningError, NotFound
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.ops.jobs import JobRun

log = logging.getLogger(__name__)
RENEW = "leader-lease"  # the scheduler's own job: reserved, no registered job may take the name
RELOAD = "feeds-reload"  # the scheduler's own job too: re-reads feeds.yml, reschedules feed jobs


def worker_id() -> str:
    """host:pid:random, so the lease names a process and two workers on one host differ."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class QuietRenewal(logging.Filter):
    """The scheduler's "Running job" / "executed successfully" lines for its own housekeeping, the
    lease renewal (every third of the lease TTL) and the feeds.yml re-read (every 30 s), go to
    DEBUG: at INFO they would be most of the worker's log, two lines every 30 s with no feed at
    all. A re-read that changes something says so itself (``reload_feeds``)."""

    def filter(self, record: logging.LogRecord) -> bool:
        job = record.args[0] if isinstance(record.args, tuple) and record.args else None
        if record.levelno != logging.INFO or getattr(job, "id", None) not in (RENEW, RELOAD):
            return True
        log.debug(record.getMessage())
        return False


class Worker:
    """``start`` schedules the jobs and returns; ``run_now`` runs one job
    through the guard at once."""

    name = "worker"

    def __init__(
        self,
        engine: Engine,
        settings: Settings,
        *,
        jobs: Sequence[Job] | None = None,
        worker: str | None = None,
        on_run: Callable[[JobRun], None] | None = None,
        metrics: FeedMetrics | None = None,
    ) -> None:
        self.engine = engine
        self.id = worker or worker_id()
        self.jobs = {
            job.name: job
            for job in (scheduled(engine, settings, self.id) if jobs is None else jobs)
        }
        for reserved in (RENEW, RELOAD):
            if reserved in self.jobs:
                raise InvalidInput(f"the job name {reserved!r} is reserved for the worker itself")
        self.feed_metrics = metrics or FeedMetrics(CollectorRegistry())
        self.reload_seconds = settings.feed_reload_seconds
        self.lease = engine.jobs.lease(self.id)
        self.renew_seconds = settings.worker_lock_ttl_seconds / 3
        self.on_run = on_run
        self._last: dict[str, JobRun] = {}
        self._guard = threading.Lock()
        # coalesce: runs missed while one was still going collapse into one; no grace limit, so a
        # late run still happens instead of being dropped.
        self.scheduler = BackgroundScheduler(
            timezone=UTC,
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
        )

    def describe(self) -> str:
        jobs = list(self.jobs.values())  # a copy: a reload may change the jobs meanwhile
        return ", ".join(f"{job.name} every {_every(job.interval_seconds)}" for job in jobs)

    def start(self) -> None:
        self.scheduler.add_job(
            self.renew,
            "interval",
            seconds=self.renew_seconds,
            id=RENEW,
            name=RENEW,
            next_run_time=datetime.now(UTC),
        )
        executors = logging.getLogger("apscheduler.executors.default")
        if not any(isinstance(f, QuietRenewal) for f in executors.filters):
            executors.addFilter(QuietRenewal())
        self.scheduler.start()
        self._schedule(list(self.jobs.values()))
        self.reload_feeds()
        self.scheduler.add_job(
            self.reload_feeds, "interval", seconds=self.reload_seconds, id=RELOAD, name=RELOAD
        )
        log.info("worker %s started: %s", self.id, self.describe())

    def stop(self) -> None:
        """Stop scheduling, wait for running jobs, then give the lease up so
        another worker need not wait."""
        if self.scheduler.running:
            self.scheduler.shutdown(wait=True)
        try:
            self.lease.release()
        except KenningError as exc:
            log.warning(
                "worker %s could not release the leader lease (it expires on its own): %s",
                self.id,
                exc,
            )

    def alive(self) -> bool:
        return bool(self.scheduler.running)

    def run_now(self, name: str) -> JobRun:
        """Run the job called ``name`` once, through the guard (never
        raises for the job's failures)."""
        try:
            with self._guard:
                job = self.jobs[name]
        except KeyError:
            raise NotFound(
                f"the worker has no job {name!r}", hint=f"jobs: {', '.join(self.jobs)}"
            ) from None
        run = guarded(
            job,
            lease=self.lease,
            jobs=self.engine.jobs,
            clock=self.engine.ctx.clock,
            worker=self.id,
        )
        with self._guard:
            self._last[name] = run
        if self.on_run is not None:
            self.on_run(run)
        return run

    def reload_feeds(self) -> list[str]:
        """Bring the feed jobs in line with feeds.yml (added, changed, removed, disabled); the
        names of the jobs that changed. A bad entry only leaves its own feed
        out (kenning.knowledge.feeds.config)."""
        wanted = {job.name: job for job in feed_jobs(self.engine, self.feed_metrics)}
        with self._guard:
            current = {n: j for n, j in self.jobs.items() if n.startswith(PREFIX)}
            gone = [n for n in current if n not in wanted]
            changed = [
                j
                for n, j in wanted.items()
                if current.get(n) is None or current[n].signature != j.signature
            ]
            for name in gone:
                del self.jobs[name]
            self.jobs.update({job.name: job for job in changed})
        for name in gone:
            if self.scheduler.get_job(name) is not None:
                self.scheduler.remove_job(name)
        self._schedule(changed)
        if gone or changed:
            log.info("worker %s feeds: %s", self.id, self.describe())
        return gone + [job.name for job in changed]

    def _schedule(self, jobs: list[Job]) -> None:
        """(Re)schedule ``jobs``, each continuing the schedule of its last recorded run."""
        if not jobs or not self.scheduler.running:
            return
        last, now = self._last_recorded(), self.engine.ctx.clock.now()
        for job in jobs:
            delay = (
                0.0 if job.at_once else first_delay(last.get(job.name), job.interval_seconds, now)
            )
            self.scheduler.add_job(
                self.run_now,
                "interval",
                args=(job.name,),
                seconds=job.interval_seconds,
                id=job.name,
                name=job.name,
                replace_existing=True,
                jitter=job.jitter_seconds or None,
                misfire_grace_time=_whole(job.misfire_grace_seconds),
                next_run_time=datetime.now(UTC) + timedelta(seconds=delay),
            )

    def renew(self) -> None:
        """Keep the lease while leading (take it when free), between runs and during long ones."""
        try:
            self.lease.hold()
        except KenningError as exc:
            log.warning("worker %s could not renew the leader lease: %s", self.id, exc)

    def _last_recorded(self) -> dict[str, float]:
        """When each job last ended, by any worker; none known when Valkey cannot say (the first
        runs then come at once and record the outage)."""
        try:
            return {job: run.finished_at for job, run in self.engine.jobs.last_runs().items()}
        except KenningError as exc:
            log.warning("worker %s could not read the last job runs: %s", self.id, exc)
            return {}

    def status(self) -> dict[str, JobRun]:
        """This worker's last run of each job, skipped and unrecorded (outage) runs included."""
        with self._guard:
            return dict(self._last)


def first_delay(last_finished: float | None, interval: float, now: float) -> float:
    """Seconds until a job's first run in this process: one interval after its last recorded run
    (so a restart does not push maintenance back), at once when it never ran or is overdue. Never
    more than one interval, whatever a skewed clock recorded."""
    if last_finished is None:
        return 0.0
    return min(interval, max(0.0, last_finished + interval - now))


def _every(seconds: float) -> str:
    return f"{seconds / 60:g} min" if seconds >= 60 else f"{seconds:g} s"


def _whole(seconds: float | None) -> int | None:
    """APScheduler takes the misfire grace as whole seconds (None: no limit)."""
    return None if seconds is None else max(1, round(seconds))
