"""The per-job guard: the one place in the worker that catches every exception.

A job run ends in exactly one of four ways, and each is visible: ``ok`` (the summary is recorded),
``outage`` (Valkey or another backend could not answer: nothing was done, and that is said, never
read as a quiet success), ``failed`` (an unexpected error, logged with its traceback under the run
id) or ``skipped`` (another worker leads). Whatever a job raises, the scheduler keeps running.
"""

from __future__ import annotations

import logging
import uuid

from feed_worker.jobs import Job
from kenning.core.clock import Clock
from kenning.core.errors import BackendUnavailable, KenningError
from kenning.ops.jobs import JobRun, Jobs, Status
from kenning.store import Lease

log = logging.getLogger(__name__)


def guarded(job: Job, *, lease: Lease, jobs: Jobs, clock: Clock, worker: str) -> JobRun:
    """Run ``job`` once if this worker holds (or can take) the leader lease; record how it ended."""
    run_id = uuid.uuid4().hex[:12]
    started = clock.now()

    def ended(
        status: Status, error: str | None = None, summary: dict[str, object] | None = None
    ) -> JobRun:
        return JobRun(
            job=job.name,
            run_id=run_id,
            status=status,
            worker=worker,
            started_at=started,
            finished_at=clock.now(),
            error=error,
            summary=dict(summary or {}),
        )

    try:
        if not lease.hold():
            return ended("skipped", summary={"leader": lease.holder()})
        run = ended("ok", summary=job.run())
    except BackendUnavailable as exc:
        log.warning("job %s run %s: outage, nothing was done: %s", job.name, run_id, exc)
        run = ended("outage", error=str(exc))
    except Exception as exc:  # the per-job guard: one failing job must not stop the scheduler
        log.exception("job %s run %s failed", job.name, run_id)
        run = ended("failed", error=f"{type(exc).__name__}: {exc}")
    _keep(jobs, run)
    return run


def _keep(jobs: Jobs, run: JobRun) -> None:
    """Record the run; when Valkey cannot take it (an outage), the
    worker's own status still has it."""
    try:
        jobs.record(run)
    except KenningError as exc:
        log.warning(
            "job %s run %s (%s) could not be recorded: %s", run.job, run.run_id, run.status, exc
        )
