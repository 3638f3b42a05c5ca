"""Ingest into the real store: articles become knowledge memories once, across runs and feeds; a
refused or failed fetch stores nothing and backs off; an unchanged feed costs nothing. Real Valkey
and model; the feed server and the clock are the only fakes."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import valkey

from kenning.core.clock import ManualClock
from kenning.core.errors import InvalidInput, NotFound
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.knowledge.feeds.config import Feed
from kenning.knowledge.feeds.ingest import backoff
from kenning.memory.listing import Listing
from kenning.memory.recall import RecallRequest
from kenning.runtime.embedding import Embedder
from tests.conftest import make_settings
from tests.feeds_server import FeedServer

HOUR = 3600.0


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
        feed_max_mb=1.0,
        feed_timeout_seconds=2.0,
        feeds_file=tmp_path / "feeds.yml",
    )
    return Engine.open(tuned, client, embedder, clock=clock)


def _feed(server: FeedServer, path: str, name: str = "news", **fields: Any) -> Feed:
    return Feed(name=name, url=server.url(path), **fields)


def _articles(engine: Engine) -> list[Any]:
    listing = Listing(namespaces=["knowledge"], kinds=["article"], limit=100)
    return list(engine.memories.list(listing).items)


def test_articles_are_stored_as_knowledge_memories(
    feeds_engine: Engine, feed_server: FeedServer, clock: ManualClock
) -> None:
    feed = _feed(feed_server, "/rss2.xml", topics=("python",), project="kenning", retention_days=30)
    run = feeds_engine.feeds.run(feed)
    assert (run.outcome, len(run.new), run.duplicates, run.error) == ("fetched", 3, 0, None)
    memory = feeds_engine.memories.get(run.new[0])
    assert (memory.namespace, memory.kind, memory.project, memory.tags, memory.actor) == (
        "knowledge",
        "article",
        "kenning",
        ("python",),
        "feed:news",
    )
    assert memory.source == "https://pythoninsider.example.org/2026/12/python-3142.html"
    assert memory.title == "Python 3.14.2 is now available"
    assert memory.content.startswith("Python 3.14.2 is now available\n\nThe second maintenance")
    assert memory.event_date is not None
    assert memory.event_date < clock.now() + 86_400 * 80
    assert memory.expires_at == clock.now() + 30 * 86_400
    assert memory.metadata["feed"] == "news"
    assert memory.metadata["summary_state"] == "unsummarised"
    undated = feeds_engine.memories.get(run.new[2])
    assert undated.event_date is None  # the feed gave no date: none invented
    events = feeds_engine.ctx.store.audit.recent(actor="feed:news")
    assert {"remember", "feed_ingest"} <= {e.action for e in events}


def test_nothing_is_stored_twice_across_runs(
    feeds_engine: Engine, feed_server: FeedServer, clock: ManualClock
) -> None:
    feed = _feed(feed_server, "/rss2.xml")
    first = feeds_engine.feeds.run(feed)
    assert len(first.new) == 3
    clock.advance(6 * HOUR)
    second = feeds_engine.feeds.run(feed)
    assert (second.outcome, second.new, second.duplicates) == ("fetched", (), 3)
    assert len(_articles(feeds_engine)) == 3


def test_the_same_article_in_another_feed_is_not_stored_again(
    feeds_engine: Engine, feed_server: FeedServer
) -> None:
    feed_server.serve("/mirror.xml", (Path(__file__).parent / "fixtures" / "rss2.xml").read_bytes())
    assert len(feeds_engine.feeds.run(_feed(feed_server, "/rss2.xml")).new) == 3
    mirror = feeds_engine.feeds.run(_feed(feed_server, "/mirror.xml", name="mirror"))
    assert (mirror.new, mirror.duplicates) == ((), 3)
    assert len(_articles(feeds_engine)) == 3


def test_a_near_duplicate_article_is_linked_not_stored(
    feeds_engine: Engine, feed_server: FeedServer
) -> None:
    original = (Path(__file__).parent / "fixtures" / "rss2.xml").read_text(encoding="utf-8")
    reworded = original.replace(
        "tag:pythoninsider,2026:post-3142", "https://mirror.example/3142"
    ).replace(
        "https://pythoninsider.example.org/2026/12/python-3142.html", "https://mirror.example/3142"
    )
    feed_server.serve("/syndicated.xml", reworded.encode())
    stored = feeds_engine.feeds.run(_feed(feed_server, "/rss2.xml")).new
    run = feeds_engine.feeds.run(_feed(feed_server, "/syndicated.xml", name="syndicated"))
    assert run.new == ()
    assert run.linked == (stored[0],)
    assert run.duplicates == 2
    links = [e for e in feeds_engine.ctx.store.audit.history(stored[0]) if e.action == "feed_link"]
    assert [(e.actor, e.details["source_url"]) for e in links] == [
        ("feed:syndicated", "https://mirror.example/3142")
    ]
    assert len(_articles(feeds_engine)) == 3


@pytest.mark.parametrize("path", ["/rss1.rdf", "/atom.xml", "/podcast.xml"])
def test_each_format_ingests(feeds_engine: Engine, feed_server: FeedServer, path: str) -> None:
    run = feeds_engine.feeds.run(_feed(feed_server, path))
    assert run.outcome == "fetched"
    assert len(run.new) >= 1
    assert len(_articles(feeds_engine)) == len(run.new)


def test_a_bozo_feed_stores_what_parsed_and_records_the_warning(
    feeds_engine: Engine, feed_server: FeedServer
) -> None:
    run = feeds_engine.feeds.run(_feed(feed_server, "/malformed.xml"))
    assert run.outcome == "fetched"
    assert len(run.new) == 1
    assert run.warning is not None
    assert "not well-formed" in run.warning
    assert feeds_engine.ctx.store.feeds.load("news").last_warning == run.warning


def test_an_unchanged_feed_costs_nothing(feeds_engine: Engine, feed_server: FeedServer) -> None:
    feed = _feed(feed_server, "/etag.xml")
    assert len(feeds_engine.feeds.run(feed).new) == 3
    again = feeds_engine.feeds.run(feed)
    assert (again.outcome, again.new, again.duplicates) == ("not_modified", (), 0)
    assert feeds_engine.ctx.store.feeds.load("news").etag is not None
    assert len(_articles(feeds_engine)) == 3


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/to-metadata.xml", "not a global address"),
        ("/error.xml", "HTTP 500"),
        ("/big.xml", "larger than"),
        ("/garbage.xml", "not an RSS or Atom feed"),
    ],
)
def test_a_failed_or_refused_fetch_stores_nothing_and_backs_off(
    feeds_engine: Engine, feed_server: FeedServer, clock: ManualClock, path: str, words: str
) -> None:
    feed = _feed(feed_server, path, interval_minutes=60)
    run = feeds_engine.feeds.run(feed)
    assert run.outcome == "failed"
    assert words in (run.error or "")
    assert _articles(feeds_engine) == []
    state = feeds_engine.ctx.store.feeds.load("news")
    assert (state.failures, state.next_attempt) == (1, clock.now() + HOUR)
    assert words in (state.last_error or "")
    requests = len(feed_server.requests)
    assert feeds_engine.feeds.run(feed).outcome == "waiting"  # within the backoff: no request
    assert len(feed_server.requests) == requests
    clock.advance(HOUR)
    assert feeds_engine.feeds.run(feed).outcome == "failed"
    assert feeds_engine.ctx.store.feeds.load("news").next_attempt == clock.now() + 2 * HOUR


def test_retry_after_sets_the_next_attempt(
    feeds_engine: Engine, feed_server: FeedServer, clock: ManualClock
) -> None:
    run = feeds_engine.feeds.run(_feed(feed_server, "/busy.xml", interval_minutes=60))
    assert run.outcome == "failed"
    assert run.next_attempt == clock.now() + 7200


def test_a_success_after_failures_resets_the_backoff(
    feeds_engine: Engine, feed_server: FeedServer
) -> None:
    feed = _feed(feed_server, "/flaky.xml")
    feed_server.routes["/flaky.xml"] = feed_server.routes["/error.xml"]
    assert feeds_engine.feeds.run(feed).outcome == "failed"
    feed_server.routes["/flaky.xml"] = feed_server.routes["/rss2.xml"]
    assert feeds_engine.feeds.run(feed, force=True).outcome == "fetched"
    state = feeds_engine.ctx.store.feeds.load("news")
    assert (state.failures, state.next_attempt, state.last_error) == (0, None, None)


def test_backoff_doubles_and_is_capped() -> None:
    assert [backoff(HOUR, n) for n in (1, 2, 3)] == [HOUR, 2 * HOUR, 4 * HOUR]
    assert backoff(HOUR, 30) == 7 * 86_400


def test_summary_mode_without_a_key_falls_back_visibly_to_the_excerpt(
    feeds_engine: Engine, feed_server: FeedServer
) -> None:
    run = feeds_engine.feeds.run(_feed(feed_server, "/atom.xml", mode="summary"))
    assert any("stored as the excerpt (no_key)" in note for note in run.notes)
    assert run.summaries == {"no_key": len(run.new)}
    memory = feeds_engine.memories.get(run.new[0])
    assert (memory.metadata["mode"], memory.metadata["stored_as"]) == ("summary", "excerpt")
    assert memory.metadata["summary_state"] == "no_key"


def test_feeds_are_read_from_the_file_and_a_bad_entry_is_visible(
    feeds_engine: Engine, feed_server: FeedServer
) -> None:
    feeds_engine.ctx.settings.resolved_feeds_file.write_text(
        f"feeds:\n  - name: good\n    url: {feed_server.url('/rss2.xml')}\n"
        "  - name: broken\n    url: ftp://old.example/feed\n",
        encoding="utf-8",
    )
    assert feeds_engine.feeds.feed("good").url == feed_server.url("/rss2.xml")
    with pytest.raises(InvalidInput, match=re.escape("disabled by an error in feeds.yml: line 4")):
        feeds_engine.feeds.feed("broken")
    with pytest.raises(NotFound):
        feeds_engine.feeds.feed("absent")
    statuses = {s.name: s for s in feeds_engine.feeds.statuses()}
    assert statuses["good"].problem is None
    assert statuses["broken"].problem is not None


def test_recall_includes_or_excludes_feed_articles(
    feeds_engine: Engine, feed_server: FeedServer
) -> None:
    stored = feeds_engine.feeds.run(_feed(feed_server, "/atom.xml")).new
    question = "valkey hash field expiration and replication release"
    included = feeds_engine.recaller.recall(RecallRequest(question, namespaces=["knowledge"]))
    assert stored[0] in [h.memory.key for h in included.hits]  # positive control
    excluded = feeds_engine.recaller.recall(
        RecallRequest(question, namespaces=["knowledge"], include_feeds=False)
    )
    assert stored[0] not in [h.memory.key for h in excluded.hits]


def test_the_briefing_includes_or_excludes_feed_articles(
    feeds_engine: Engine, feed_server: FeedServer
) -> None:
    stored = feeds_engine.feeds.run(_feed(feed_server, "/rss1.rdf", project="kenning")).new
    included = feeds_engine.briefing.briefing("kenning")
    # the positive control: with feeds, the articles are recent knowledge
    assert set(stored) <= {entry.key for entry in included.sections.recent_knowledge}
    excluded = feeds_engine.briefing.briefing("kenning", include_feeds=False)
    assert not set(stored) & {entry.key for entry in excluded.sections.recent_knowledge}


def test_a_new_url_drops_the_old_validators_and_backoff(
    feeds_engine: Engine, feed_server: FeedServer
) -> None:
    failing = feeds_engine.feeds.run(_feed(feed_server, "/error.xml"))
    assert failing.outcome == "failed"
    assert feeds_engine.feeds.run(_feed(feed_server, "/error.xml")).outcome == "waiting"
    moved = feeds_engine.feeds.run(_feed(feed_server, "/etag.xml"))  # the same feed, a new URL
    assert (moved.outcome, len(moved.new)) == ("fetched", 3)
    state = feeds_engine.ctx.store.feeds.load("news")
    assert (state.url, state.failures) == (feed_server.url("/etag.xml"), 0)
    assert state.etag is not None
    assert "if-none-match" not in feed_server.hits("/etag.xml")[0].headers
