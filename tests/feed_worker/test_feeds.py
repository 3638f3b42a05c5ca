"""The worker's feed jobs: scheduled from feeds.yml, reloaded when it changes, run by the leader
only, counted in the metrics. Real Valkey and model; the feed server and the clock are the only
fakes."""

from __future__ import annotations

from pathlib import Path

import pytest
import valkey
from prometheus_client import CollectorRegistry

from feed_worker.feeds import PREFIX
from feed_worker.metrics import FeedMetrics
from feed_worker.worker import RELOAD, Worker
from kenning.core.clock import ManualClock
from kenning.core.errors import InvalidInput
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.listing import Listing
from kenning.ops.jobs import JobRun
from kenning.runtime.embedding import Embedder
from tests.conftest import make_settings
from tests.feed_worker.conftest import Recorder
from tests.feeds_server import FeedServer


@pytest.fixture
def feeds_engine(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    feed_server: FeedServer,
    tmp_path: Path,
) -> Engine:
    tuned = make_settings(
        settings.data_dir,
        settings.valkey_port,
        key_prefix=settings.key_prefix,
        feed_allow=feed_server.allow,
        feed_timeout_seconds=5.0,
        feeds_file=tmp_path / "feeds.yml",
        feed_reload_seconds=0.2,
    )
    return Engine.open(tuned, client, embedder, clock=clock)


def _write(engine: Engine, text: str) -> None:
    engine.ctx.settings.resolved_feeds_file.write_text(text, encoding="utf-8")


def _one_feed(server: FeedServer, path: str = "/rss2.xml", extra: str = "") -> str:
    return f"feeds:\n  - name: news\n    url: {server.url(path)}\n    topics: [python]\n{extra}"


def _articles(engine: Engine) -> int:
    return engine.memories.list(Listing(namespaces=["knowledge"], kinds=["article"])).total


def test_a_feed_job_ingests_and_counts_in_the_metrics(
    feeds_engine: Engine, feed_server: FeedServer
) -> None:
    _write(feeds_engine, _one_feed(feed_server))
    registry = CollectorRegistry()
    worker = Worker(
        feeds_engine, feeds_engine.ctx.settings, worker="w1", metrics=FeedMetrics(registry)
    )
    assert worker.reload_feeds() == [PREFIX + "news"]
    run = worker.run_now(PREFIX + "news")
    assert (run.status, run.summary["new"], run.summary["outcome"]) == ("ok", 3, "fetched")
    again = worker.run_now(PREFIX + "news")
    assert (again.status, again.summary["new"], again.summary["duplicates"]) == ("ok", 0, 3)
    assert _articles(feeds_engine) == 3

    def sample(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    assert sample("kenning_feed_fetches_total", feed="news", outcome="fetched") == 2
    assert sample("kenning_feed_articles_total", feed="news", outcome="new") == 3
    assert sample("kenning_feed_articles_total", feed="news", outcome="duplicate") == 3
    assert sample("kenning_feed_fetch_seconds_count", feed="news") == 2
    worker.stop()


def test_a_failed_fetch_is_a_failed_run_and_the_error_is_kept(
    feeds_engine: Engine, feed_server: FeedServer
) -> None:
    _write(feeds_engine, _one_feed(feed_server, "/to-metadata.xml"))
    registry = CollectorRegistry()
    worker = Worker(
        feeds_engine, feeds_engine.ctx.settings, worker="w1", metrics=FeedMetrics(registry)
    )
    worker.reload_feeds()
    run = worker.run_now(PREFIX + "news")
    assert run.status == "failed"
    assert "169.254.169.254, not a global address" in (run.error or "")
    assert feeds_engine.jobs.last_runs()[PREFIX + "news"].status == "failed"
    failed = {"feed": "news", "outcome": "failed"}
    assert registry.get_sample_value("kenning_feed_fetches_total", failed) == 1
    assert _articles(feeds_engine) == 0
    worker.stop()


def test_feeds_yml_changes_reschedule_without_a_restart(
    feeds_engine: Engine, feed_server: FeedServer, stopper: list[Worker]
) -> None:
    worker = Worker(feeds_engine, feeds_engine.ctx.settings, worker="w1")
    stopper.append(worker)
    worker.start()
    assert worker.scheduler.get_job(RELOAD) is not None
    assert not [n for n in worker.jobs if n.startswith(PREFIX)]  # no feeds.yml yet
    _write(feeds_engine, _one_feed(feed_server))
    assert worker.reload_feeds() == [PREFIX + "news"]
    job = worker.scheduler.get_job(PREFIX + "news")
    assert job is not None
    assert job.trigger.interval.total_seconds() == 360 * 60
    assert job.trigger.jitter == 300
    assert worker.reload_feeds() == []  # unchanged file: nothing rescheduled
    _write(feeds_engine, _one_feed(feed_server, extra="    interval_minutes: 30\n"))
    assert worker.reload_feeds() == [PREFIX + "news"]
    assert worker.scheduler.get_job(PREFIX + "news").trigger.interval.total_seconds() == 1800
    _write(feeds_engine, _one_feed(feed_server, extra="    enabled: false\n"))
    assert worker.reload_feeds() == [PREFIX + "news"]
    assert worker.scheduler.get_job(PREFIX + "news") is None
    assert PREFIX + "news" not in worker.jobs


def test_a_bad_entry_leaves_out_only_its_feed(
    feeds_engine: Engine, feed_server: FeedServer
) -> None:
    _write(feeds_engine, _one_feed(feed_server) + "  - name: broken\n    url: file:///etc/passwd\n")
    worker = Worker(feeds_engine, feeds_engine.ctx.settings, worker="w1")
    assert worker.reload_feeds() == [PREFIX + "news"]
    with pytest.raises(InvalidInput, match="line 5"):
        feeds_engine.feeds.feed("broken")


def test_two_workers_racing_ingest_once(
    feeds_engine: Engine, feed_server: FeedServer, recorder: Recorder, stopper: list[Worker]
) -> None:
    _write(feeds_engine, _one_feed(feed_server))
    workers = [
        Worker(feeds_engine, feeds_engine.ctx.settings, worker=name, on_run=recorder)
        for name in ("a", "b")
    ]
    stopper.extend(workers)
    for worker in workers:
        worker.start()  # no recorded run yet: both schedule the feed job at once

    def both_tried(runs: list[JobRun]) -> bool:
        return len({r.worker for r in runs if r.job == PREFIX + "news"}) == 2

    runs = [r for r in recorder.wait_until(both_tried) if r.job == PREFIX + "news"]
    ingested = [r for r in runs if r.status == "ok"]
    assert len(ingested) == 1
    assert ingested[0].summary["new"] == 3
    assert [r.status for r in runs if r.worker != ingested[0].worker] == ["skipped"]
    assert len(feed_server.hits("/rss2.xml")) == 1
    assert _articles(feeds_engine) == 3
