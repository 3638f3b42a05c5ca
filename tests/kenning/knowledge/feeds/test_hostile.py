"""The feed path's small holes of issue 35 (item 7), each with its positive control: a re-post dated
a day later is the same article; a billion-laughs or XXE feed is refused (the feed fails, nothing
is stored); URL credentials never show in an error or in `kenning feeds list`; after a 304 the
listed counts are the last fetch's (zero), not the run before; a feed whose URL changed runs at
once. Real Valkey and model; the feed server and the clock are the fakes."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from feed_worker.feeds import feed_jobs
from feed_worker.metrics import FeedMetrics
from kenning.engine import Engine
from kenning.knowledge.feeds.config import Feed
from kenning.knowledge.feeds.guard import redacted
from kenning.knowledge.feeds.ingest import FeedStatus
from kenning.knowledge.feeds.parse import declares_entities
from kenning_cli.commands.feeds import line
from tests.feeds_server import FeedServer
from tests.kenning.knowledge.feeds.test_ingest import _articles, feeds_engine  # noqa: F401

DAY = 86_400.0
TEXT = (
    "Valkey 9.1 adds per-field hash expiration and dual-channel replication for faster full "
    "syncs; the release also speeds up the search module's tag filters."
)


def item(guid: str, date: str) -> str:
    return (
        f"<item><title>Valkey 9.1 released</title><link>https://ops.example/{guid}</link>"
        f"<guid>{guid}</guid><pubDate>{date}</pubDate><description>{TEXT}</description></item>"
    )


def rss(*items: str) -> bytes:
    return (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Ops</title>'
        "<link>https://ops.example/</link><description>x</description>"
        + "".join(items)
        + "</channel></rss>"
    ).encode()


def test_a_repost_dated_a_day_later_is_the_same_article(
    feeds_engine: Engine,  # noqa: F811
    feed_server: FeedServer,
) -> None:
    feed_server.serve("/a.xml", rss(item("post-1", "Tue, 01 Dec 2026 10:00:00 GMT")))
    feed_server.serve("/b.xml", rss(item("repost-1", "Wed, 02 Dec 2026 12:00:00 GMT")))
    feed_server.serve("/c.xml", rss(item("again-1", "Sat, 02 Jan 2027 12:00:00 GMT")))
    first = feeds_engine.feeds.run(Feed(name="a", url=feed_server.url("/a.xml")))
    repost = feeds_engine.feeds.run(Feed(name="b", url=feed_server.url("/b.xml")))
    assert (len(first.new), len(repost.new), repost.linked) == (1, 0, first.new)
    # the positive control: the same text a month on is a new event, stored
    later = feeds_engine.feeds.run(Feed(name="c", url=feed_server.url("/c.xml")))
    assert len(later.new) == 1
    assert len(_articles(feeds_engine)) == 2


LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE rss [
 <!ENTITY lol "lol">
 <!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol9 "&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;&lol2;">
]>
<rss version="2.0"><channel><title>&lol9;</title><link>https://x.example/</link>
<description>x</description><item><title>&lol9;</title><guid>l-1</guid>
<description>&lol9;</description></item></channel></rss>"""
XXE = b"""<?xml version="1.0"?>
<!DOCTYPE rss [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>
<rss version="2.0"><channel><title>x</title><link>https://x.example/</link>
<description>x</description><item><title>x</title><guid>x-1</guid>
<description>&xxe;</description></item></channel></rss>"""


@pytest.mark.parametrize("body", [LAUGHS, XXE], ids=["billion-laughs", "xxe"])
def test_a_feed_declaring_entities_fails_visibly_and_stores_nothing(
    feeds_engine: Engine,  # noqa: F811
    feed_server: FeedServer,
    body: bytes,
) -> None:
    feed_server.serve("/evil.xml", body)
    feed = Feed(name="evil", url=feed_server.url("/evil.xml"))
    run = feeds_engine.feeds.run(feed)
    assert run.outcome == "failed"
    assert run.error is not None
    assert "declares its own entities" in run.error
    assert _articles(feeds_engine) == []
    state = feeds_engine.feeds.states.load("evil")
    assert FeedStatus("evil", feed, None, state).health == "failing"  # never "ok"
    # the positive control: the same feed without its DTD is read
    assert not declares_entities(rss(item("fine-1", "Tue, 01 Dec 2026 10:00:00 GMT")))


def test_url_credentials_never_show_in_an_error_or_the_listing(
    feeds_engine: Engine,  # noqa: F811
    feed_server: FeedServer,
) -> None:
    url = feed_server.url("/missing.xml").replace("http://", "http://reader:s3cret-pw@")
    feed = Feed(name="private", url=url)
    run = feeds_engine.feeds.run(feed)
    assert run.outcome == "failed"
    assert run.error is not None
    assert "credentials in a feed URL are not sent" in run.error  # the error itself is there
    assert "s3cret-pw" not in run.error
    assert "reader:" not in run.error
    state = feeds_engine.feeds.states.load("private")
    assert state.last_error is not None
    assert "s3cret-pw" not in state.last_error
    shown = line(FeedStatus("private", feed, None, state))
    assert "s3cret-pw" not in shown
    assert "http://***@127.0.0.1" in shown
    assert redacted("see https://u:p@h.example/x and ftp://a@b/") == (
        "see https://***@h.example/x and ftp://***@b/"
    )


def test_after_a_304_the_listing_shows_the_last_fetchs_counts(
    feeds_engine: Engine,  # noqa: F811
    feed_server: FeedServer,
) -> None:
    feed = Feed(name="news", url=feed_server.url("/etag.xml"))
    first = feeds_engine.feeds.run(feed)
    assert len(first.new) == 3
    assert feeds_engine.feeds.states.load("news").last_counts["new"] == 3  # positive control
    feeds_engine.ctx.clock.advance(6 * 3600)  # type: ignore[attr-defined]
    again = feeds_engine.feeds.run(feed)
    assert again.outcome == "not_modified"
    state = feeds_engine.feeds.states.load("news")
    assert state.last_counts == {"new": 0, "duplicates": 0, "linked": 0, "rejected": 0}
    shown = line(FeedStatus("news", feed, None, state))
    assert "last duplicates 0, linked 0, new 0, rejected 0" in shown
    assert "new 3" not in shown


def test_a_feed_whose_url_changed_runs_at_once(
    feeds_engine: Engine,  # noqa: F811
    feed_server: FeedServer,
) -> None:
    path = feeds_engine.ctx.settings.resolved_feeds_file
    path.write_text(f"feeds:\n  - name: news\n    url: {feed_server.url('/rss2.xml')}\n")
    metrics = FeedMetrics(CollectorRegistry())
    (job,) = feed_jobs(feeds_engine, metrics)
    assert job.at_once is False  # never fetched: the schedule's own first run
    job.run()
    (job,) = feed_jobs(feeds_engine, metrics)
    assert job.at_once is False  # fetched at this URL: it waits for its interval
    path.write_text(f"feeds:\n  - name: news\n    url: {feed_server.url('/atom.xml')}\n")
    (moved,) = feed_jobs(feeds_engine, metrics)
    assert moved.at_once is True  # a new URL: its first fetch does not wait out the old one's
