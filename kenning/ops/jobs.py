"""Scheduled jobs as the engine sees them: the worker's leader lease and the last run of each job.

The scheduler itself lives in the worker process (feed_worker/, docs/worker.md); the engine only
keeps what every door may need to read back: who leads, and how each job's last run ended.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from kenning.core.errors import InvalidInput
from kenning.core.models import iso
from kenning.core.settings import Settings
from kenning.knowledge.feeds import config
from kenning.knowledge.feeds.ingest import JOB_PREFIX, job_name
from kenning.store import Lease, Store

Status = Literal["ok", "failed", "outage", "skipped"]
LEADER_LOCK = "worker"  # one lease for the whole worker: its leader runs every job


@dataclass(frozen=True)
class JobRun:
    """How one run of a job ended.

    ``ok``: ran and returned ``summary``. ``failed``: raised an unexpected error (``error`` names
    it). ``outage``: Valkey or another backend could not answer, so nothing was checked.
    ``skipped``: another worker leads; skipped runs stay in the worker's memory
    and are never recorded here.
    """

    job: str
    run_id: str
    status: Status
    worker: str
    started_at: float
    finished_at: float
    error: str | None = None
    summary: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> JobRun:
        return cls(
            job=str(data["job"]),
            run_id=str(data["run_id"]),
            status=data["status"],
            worker=str(data["worker"]),
            started_at=float(data["started_at"]),
            finished_at=float(data["finished_at"]),
            error=data.get("error"),
            summary=dict(data.get("summary") or {}),
        )


class Jobs:
    """Needs only the store and the settings, so `kenning doctor` can read it
    without opening the engine."""

    def __init__(self, store: Store, settings: Settings) -> None:
        self.store = store
        self.settings = settings
        self.runs = store.job_runs

    def lease(self, owner: str) -> Lease:
        """The worker leader lease for ``owner`` (KENNING_WORKER_LOCK_TTL_SECONDS long)."""
        return self.store.lease(
            self.store.key("lock", LEADER_LOCK), owner, self.settings.worker_lock_ttl_seconds
        )

    def leader(self) -> str | None:
        """The worker that holds the leader lease now, or None when no worker leads."""
        return self.lease("").holder()

    def record(self, run: JobRun) -> None:
        """Keep ``run`` as its job's last run (a skipped run is not a run: refused)."""
        if run.status == "skipped":
            raise InvalidInput(
                "a skipped run is not recorded", hint="record only ok, failed or outage runs"
            )
        self.runs.save(run.job, run.to_dict())

    def last_runs(self) -> dict[str, JobRun]:
        """The last recorded run of every job that has run, by job name."""
        return {job: JobRun.from_dict(data) for job, data in sorted(self.runs.load_all().items())}

    def health(self) -> tuple[bool, str]:
        """Who leads and how each job still configured last ended (for `kenning doctor` and
        `kenning health worker`)."""
        return health(self.leader(), self.current(self.last_runs()))

    def current(self, runs: dict[str, JobRun]) -> dict[str, JobRun]:
        """``runs`` without those of feeds no longer in feeds.yml or disabled there: the worker
        dropped their jobs, so their last run says nothing about it now. A feed whose entry is
        refused keeps its run (it is still configured, and broken); an unreadable feeds.yml, or an
        entry without a readable name, forgets nothing."""
        book = config.load(self.settings.resolved_feeds_file)
        if any(not problem.name for problem in book.problems):
            return runs
        named = {f.name for f in book.feeds if f.enabled} | {p.name for p in book.problems}
        kept = {job_name(name) for name in named if name}
        return {
            job: run for job, run in runs.items() if not job.startswith(JOB_PREFIX) or job in kept
        }


def health(leader: str | None, runs: dict[str, JobRun]) -> tuple[bool, str]:
    """One line about the worker; not ok when a job's last run failed or hit an outage.

    No leader is not a failure: a deployment may run only the MCP server and
    `kenning maintain` from cron.
    """
    parts = [
        f"leader {leader}"
        if leader
        else "no worker holds the lock (`kenning worker` or `kenning up` runs one)"
    ]
    for job, run in runs.items():
        parts.append(
            f"{job} {run.status} at {iso(run.finished_at)}"
            + (f": {run.error}" if run.error else "")
        )
    if not runs:
        parts.append("no job has run yet")
    return all(run.status == "ok" for run in runs.values()), "; ".join(parts)
