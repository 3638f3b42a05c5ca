"""The engine side of scheduled jobs: the leader lease (store/locks.py) and
the last run of each job."""

from __future__ import annotations

from typing import Any

import pytest
import valkey

from kenning.core.errors import InvalidInput
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.ops.jobs import JobRun, Status, health
from kenning.store.locks import Lease
from tests.conftest import NOW


def test_a_lease_is_held_by_one_owner_and_only_the_owner_renews_or_releases(
    client: valkey.Valkey, settings: Settings
) -> None:
    key = f"{settings.key_prefix}lock:test"
    first, second = Lease(client, key, "a", 30.0), Lease(client, key, "b", 30.0)
    assert first.holder() is None
    assert first.hold()
    assert first.holder() == "a"
    assert not second.hold()  # held by a
    assert not second.release()  # b cannot free a's lease
    assert second.holder() == "a"
    client.pexpire(key, 500)  # a renewal puts the full lease back
    assert first.hold()
    remaining: Any = client.pttl(key)
    assert int(remaining) > 25_000
    assert first.release()
    assert first.holder() is None
    assert second.hold()
    assert second.holder() == "b"


def test_a_renewal_never_extends_a_lease_another_owner_took(
    client: valkey.Valkey, settings: Settings
) -> None:
    key = f"{settings.key_prefix}lock:test"
    first, second = Lease(client, key, "a", 30.0), Lease(client, key, "b", 30.0)
    assert first.hold()
    client.delete(key)  # a's lease expired
    assert second.hold()
    assert not first.hold()  # a's renewal finds b's lease: refused, b keeps it
    assert not first.release()
    assert second.holder() == "b"


def test_the_engine_records_and_reads_back_the_last_run_of_each_job(engine: Engine) -> None:
    assert engine.jobs.last_runs() == {}
    ok = JobRun(
        job="maintenance",
        run_id="r1",
        status="ok",
        worker="w",
        started_at=1.0,
        finished_at=2.0,
        summary={"expired": 3},
    )
    outage = JobRun(
        job="feeds",
        run_id="r2",
        status="outage",
        worker="w",
        started_at=3.0,
        finished_at=3.5,
        error="Valkey is unreachable",
    )
    engine.jobs.record(ok)
    engine.jobs.record(outage)
    assert engine.jobs.last_runs() == {"feeds": outage, "maintenance": ok}
    later = JobRun(
        job="maintenance",
        run_id="r3",
        status="failed",
        worker="w",
        started_at=5.0,
        finished_at=6.0,
        error="RuntimeError: boom",
    )
    engine.jobs.record(later)
    assert engine.jobs.last_runs()["maintenance"] == later  # each run replaces its job's last run
    with pytest.raises(InvalidInput):
        engine.jobs.record(
            JobRun(
                job="maintenance",
                run_id="r4",
                status="skipped",
                worker="x",
                started_at=7.0,
                finished_at=7.0,
            )
        )
    assert engine.jobs.last_runs()["maintenance"] == later


def test_the_leader_is_whoever_holds_the_worker_lease(engine: Engine) -> None:
    assert engine.jobs.leader() is None
    lease = engine.jobs.lease("w1")
    assert lease.hold()
    assert engine.jobs.leader() == "w1"
    assert not engine.jobs.lease("w2").hold()
    assert lease.release()
    assert engine.jobs.leader() is None


def test_health_names_the_leader_and_fails_on_a_failed_or_outage_run() -> None:
    def run(job: str, status: Status, error: str | None = None) -> JobRun:
        return JobRun(
            job=job,
            run_id="r",
            status=status,
            worker="w",
            started_at=0.0,
            finished_at=NOW,
            error=error,
        )

    assert health(None, {}) == (
        True,
        "no worker holds the lock (`kenning worker` or `kenning up` runs one); no job has run yet",
    )
    assert health("w", {"maintenance": run("maintenance", "ok")}) == (
        True,
        "leader w; maintenance ok at 2026-09-21T14:13:20Z",
    )
    ok, detail = health(
        "w",
        {
            "feeds": run("feeds", "outage", "Valkey is unreachable"),
            "maintenance": run("maintenance", "ok"),
        },
    )
    assert not ok
    assert detail == (
        "leader w; feeds outage at 2026-09-21T14:13:20Z: Valkey is unreachable; "
        "maintenance ok at 2026-09-21T14:13:20Z"
    )
    assert not health("w", {"maintenance": run("maintenance", "failed", "RuntimeError: boom")})[0]
