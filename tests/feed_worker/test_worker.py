"""The worker: the maintenance job (directly and through the scheduler), the leader lease, the
per-job guard and a Valkey outage. Real Valkey and model; only the clock is manual."""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import valkey

from feed_worker.jobs import MAINTENANCE, MAINTENANCE_ACTOR, Job, scheduled
from feed_worker.worker import RENEW, Worker, first_delay
from kenning.core.clock import ManualClock
from kenning.core.errors import InvalidInput, NotFound
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.embedded import EmbeddedValkey
from kenning.ops.jobs import JobRun
from kenning.runtime.embedding import Embedder
from kenning.store import connect
from tests.conftest import NOW, free_port, make_settings
from tests.feed_worker.conftest import Recorder, eventually

DAY = 86_400.0
FAST = 0.005  # minutes: the maintenance job every 0.3 s
CODE = "The conference discount code is KENNING26"
QUESTION = RecallRequest("what is the conference discount code?", projects=["p"])


def _engine(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    **overrides: object,
) -> tuple[Engine, Settings]:
    tuned = make_settings(
        settings.data_dir, settings.valkey_port, key_prefix=settings.key_prefix, **overrides
    )
    return Engine.open(tuned, client, embedder, clock=clock), tuned


def _expiring(engine: Engine, clock: ManualClock) -> str:
    """An expiring memory, shown active and recallable first (the
    positive control), then made due."""
    key = engine.memories.remember(
        Draft(CODE, project="p", expires_at=clock.now() + DAY), actor="feed"
    ).key
    assert engine.memories.get(key).state == "active"
    assert key in [h.memory.key for h in engine.recaller.recall(QUESTION).hits]
    clock.advance(2 * DAY)
    return key


def _archived_by_the_worker(engine: Engine, key: str) -> None:
    memory = engine.memories.get(key)
    assert (memory.state, memory.state_actor) == ("archived", MAINTENANCE_ACTOR)
    assert key not in [h.memory.key for h in engine.recaller.recall(QUESTION).hits]


def test_the_maintenance_job_archives_an_expired_memory(
    engine: Engine, settings: Settings, clock: ManualClock
) -> None:
    key = _expiring(engine, clock)
    worker = Worker(engine, settings, worker="w1")
    run = worker.run_now(MAINTENANCE)
    assert (run.status, run.worker, run.error, run.summary["expired"]) == ("ok", "w1", None, 1)
    assert run.started_at == run.finished_at == clock.now()  # the engine clock, not the wall clock
    _archived_by_the_worker(engine, key)
    assert engine.jobs.last_runs() == {MAINTENANCE: run}
    assert engine.maintenance.last_findings() is not None  # the report is kept by the engine
    assert engine.jobs.leader() == "w1"
    worker.stop()
    assert engine.jobs.leader() is None  # stop released the lease


def test_the_scheduler_runs_maintenance_every_interval(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    recorder: Recorder,
    stopper: list[Worker],
) -> None:
    engine, fast = _engine(settings, client, embedder, clock, maintenance_interval_minutes=FAST)
    key = _expiring(engine, clock)
    worker = Worker(engine, fast, worker="w1", on_run=recorder)
    stopper.append(worker)
    worker.start()
    runs = recorder.wait_until(lambda runs: len([r for r in runs if r.status == "ok"]) >= 2)
    first, second = (r for r in runs if r.status == "ok")
    # archived once, then nothing due
    assert (first.summary["expired"], second.summary["expired"]) == (1, 0)
    _archived_by_the_worker(engine, key)
    assert worker.alive()


def test_the_leader_lease_keeps_a_second_worker_out_until_released(
    engine: Engine, settings: Settings
) -> None:
    first, second = Worker(engine, settings, worker="a"), Worker(engine, settings, worker="b")
    # positive control: the job runs for the leader
    assert first.run_now(MAINTENANCE).status == "ok"
    skipped = second.run_now(MAINTENANCE)
    assert (skipped.status, skipped.summary) == ("skipped", {"leader": "a"})
    assert engine.jobs.last_runs()[MAINTENANCE].worker == "a"  # a skipped run is not recorded
    assert second.status()[MAINTENANCE] == skipped
    first.stop()
    took_over = second.run_now(MAINTENANCE)
    assert (took_over.status, engine.jobs.leader()) == ("ok", "b")
    assert engine.jobs.last_runs()[MAINTENANCE].worker == "b"
    assert first.run_now(MAINTENANCE).status == "skipped"  # the old leader does not take it back
    second.stop()


def test_a_dead_leaders_lease_expires_and_another_worker_takes_over(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    engine, short = _engine(settings, client, embedder, clock, worker_lock_ttl_seconds=2.0)
    # The dead worker's job is instant, so its fresh lease cannot lapse
    # before the second worker tries.
    dead = Worker(engine, short, worker="dead", jobs=[Job(MAINTENANCE, dict, 3600.0)])
    second = Worker(engine, short, worker="b")
    assert dead.run_now(MAINTENANCE).status == "ok"
    # positive control: held while "dead" is fresh
    assert second.run_now(MAINTENANCE).status == "skipped"
    # "dead" never renews nor releases (as if its process was killed): only
    # the expiry frees the lease.
    run = eventually(lambda: second.run_now(MAINTENANCE), lambda r: r.status == "ok")
    assert (run.worker, engine.jobs.leader()) == ("b", "b")
    second.stop()


def test_two_running_workers_never_both_run_the_job(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    recorder: Recorder,
    stopper: list[Worker],
) -> None:
    engine, fast = _engine(settings, client, embedder, clock, maintenance_interval_minutes=FAST)
    workers = [Worker(engine, fast, worker=name, on_run=recorder) for name in ("a", "b")]
    stopper.extend(workers)
    for worker in workers:
        worker.start()

    def enough(runs: list[JobRun]) -> bool:
        return sum(r.status == "ok" for r in runs) >= 3 and any(r.status == "skipped" for r in runs)

    runs = recorder.wait_until(enough)
    (leader,) = {r.worker for r in runs if r.status == "ok"}
    assert {r.worker for r in runs if r.status == "skipped"} == {"a", "b"} - {leader}
    assert {r.summary["leader"] for r in runs if r.status == "skipped"} == {leader}
    assert engine.jobs.leader() == leader


def test_a_job_that_raises_is_recorded_and_the_scheduler_keeps_running(
    engine: Engine,
    settings: Settings,
    recorder: Recorder,
    stopper: list[Worker],
    caplog: pytest.LogCaptureFixture,
) -> None:
    def on_fire() -> dict[str, object]:
        raise RuntimeError("the feed host is on fire")

    ticks: list[int] = []

    def tick() -> dict[str, object]:
        ticks.append(1)
        return {"ticks": len(ticks)}

    worker = Worker(
        engine,
        settings,
        worker="w1",
        on_run=recorder,
        jobs=[Job("boom", on_fire, 0.2), Job("tick", tick, 0.2)],
    )
    stopper.append(worker)
    worker.start()

    def kept_going(runs: list[JobRun]) -> bool:
        failed = [i for i, r in enumerate(runs) if r.job == "boom" and r.status == "failed"]
        return len(failed) >= 2 and any(
            r.job == "tick" and r.status == "ok" for r in runs[failed[0] :]
        )

    recorder.wait_until(kept_going)
    assert worker.alive()
    recorded = engine.jobs.last_runs()["boom"]
    assert (recorded.status, recorded.error) == ("failed", "RuntimeError: the feed host is on fire")
    assert recorded.run_id in {r.run_id for r in recorder.of("boom", "failed")}
    logged = [
        r for r in caplog.records if r.getMessage() == f"job boom run {recorded.run_id} failed"
    ]
    assert logged
    assert logged[0].exc_info is not None  # the traceback is in the log, under the run id
    assert engine.jobs.last_runs()["tick"].status == "ok"


def test_valkey_down_is_recorded_as_an_outage_not_a_crash(
    tmp_path: Path, embedder: Embedder, recorder: Recorder
) -> None:
    settings = make_settings(tmp_path, free_port(), maintenance_interval_minutes=FAST)
    with EmbeddedValkey(settings) as server:
        engine = Engine.open(settings, connect(settings), embedder, clock=ManualClock(NOW))
        worker = Worker(engine, settings, worker="w1", on_run=recorder)
        # positive control: the job works while Valkey is up
        assert worker.run_now(MAINTENANCE).status == "ok"
        server.stop()
        run = worker.run_now(MAINTENANCE)
        assert run.status == "outage"
        assert run.error is not None
        assert "unreachable" in run.error
        # kept by the worker: Valkey could not take the record
        assert worker.status()[MAINTENANCE] == run
        worker.start()
        # the scheduler too
        recorder.wait_until(lambda runs: sum(r.status == "outage" for r in runs) >= 3)
        assert worker.alive()
        worker.stop()  # the lease cannot be released; stopping still succeeds
        assert not worker.alive()
    assert {r.status for r in recorder.runs} == {"ok", "outage"}


def test_job_names_are_checked(engine: Engine, settings: Settings) -> None:
    with pytest.raises(InvalidInput):
        Worker(engine, settings, jobs=[Job(RENEW, dict, 1.0)])
    with pytest.raises(NotFound):
        Worker(engine, settings).run_now("no-such-job")


def test_first_delay_continues_the_schedule_of_the_last_recorded_run() -> None:
    assert first_delay(None, 3600.0, NOW) == 0.0  # never ran: at once
    # ran 10 minutes ago: 50 minutes from now
    assert first_delay(NOW - 600.0, 3600.0, NOW) == 3000.0
    assert first_delay(NOW - 7200.0, 3600.0, NOW) == 0.0  # overdue: at once
    # a future record (skewed clock): one interval
    assert first_delay(NOW + 7200.0, 3600.0, NOW) == 3600.0


def test_a_restarted_worker_keeps_the_schedule_and_a_new_job_runs_at_start(
    engine: Engine,
    settings: Settings,
    clock: ManualClock,
    recorder: Recorder,
    stopper: list[Worker],
) -> None:
    assert settings.maintenance_interval_minutes == 60
    earlier = Worker(engine, settings, worker="w1")
    assert earlier.run_now(MAINTENANCE).status == "ok"
    earlier.stop()
    clock.advance(600.0)  # ten minutes later, a new worker starts
    worker = Worker(
        engine,
        settings,
        worker="w2",
        on_run=recorder,
        jobs=[*scheduled(engine, settings), Job("fresh", dict, 3600.0)],
    )
    stopper.append(worker)
    worker.start()
    # never ran: now
    recorder.wait_until(lambda runs: any(r.job == "fresh" and r.status == "ok" for r in runs))
    next_in = worker.scheduler.get_job(MAINTENANCE).next_run_time - datetime.now(UTC)
    # 60 minutes after the last run, not after start
    assert timedelta(minutes=45) < next_in <= timedelta(minutes=50)


def test_the_lease_renewal_logs_at_debug_and_the_jobs_still_at_info(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    engine, short = _engine(settings, client, embedder, clock, worker_lock_ttl_seconds=0.6)
    worker = Worker(engine, short, worker="quiet", jobs=[Job(MAINTENANCE, dict, 0.3)])
    with caplog.at_level(logging.DEBUG):
        worker.start()
        try:
            eventually(
                lambda: [r for r in caplog.records if f'"{RENEW} (' in r.getMessage()],
                lambda r: len(r) >= 4,
            )
            eventually(lambda: worker.status().get(MAINTENANCE), lambda run: run is not None)
        finally:
            worker.stop()
    renewals = [r for r in caplog.records if f'"{RENEW} (' in r.getMessage()]
    assert {(r.name, r.levelname) for r in renewals} == {("feed_worker.worker", "DEBUG")}
    jobs = [r for r in caplog.records if f'"{MAINTENANCE} (' in r.getMessage()]
    # positive control: the jobs' own lines stay at INFO
    assert "INFO" in {r.levelname for r in jobs}


def test_with_no_feeds_the_housekeeping_jobs_log_nothing_at_info(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    recorder: Recorder,
    stopper: list[Worker],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The feeds.yml re-read and the lease renewal run every few seconds here (every 30 s and 10 s
    by default): they never write a line at INFO, while a real job's run still does."""
    engine, fast = _engine(
        settings,
        client,
        embedder,
        clock,
        maintenance_interval_minutes=FAST,
        feed_reload_seconds=0.2,
        worker_lock_ttl_seconds=0.6,
        feeds_file=settings.data_dir / "no-feeds.yml",
    )
    caplog.set_level(logging.DEBUG)
    worker = Worker(engine, fast, worker="w1", on_run=recorder)
    stopper.append(worker)
    worker.start()
    recorder.wait_until(lambda runs: len(runs) >= 3)  # 0.9 s at least: several re-reads
    worker.stop()
    info = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert any(MAINTENANCE in line and "Running job" in line for line in info)  # positive control
    recurring = [line for line in info if "Running job" in line or "executed successfully" in line]
    assert not [line for line in recurring if RENEW in line or "feeds-reload" in line]
    assert len([line for line in debug if "feeds-reload" in line and "Running job" in line]) >= 2
