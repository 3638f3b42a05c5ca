"""Feed bytes -> entries: RSS 2.0, Atom, RSS 1.0, a podcast, a bozo feed; HTML to text; dates
never invented."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from kenning.core.errors import FeedError
from kenning.knowledge.feeds import parse

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _parsed(name: str, content_type: str = "application/xml") -> parse.ParsedFeed:
    return parse.parse((FIXTURES / name).read_bytes(), {"content-type": content_type})


def _at(text: str) -> float:
    return datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp()


def test_rss2_entries_with_html_stripped_and_dates_normalised() -> None:
    feed = _parsed("rss2.xml")
    assert (feed.title, feed.error, feed.skipped) == ("Python Insider", None, 0)
    release, summit, security = feed.entries
    assert release.title == "Python 3.14.2 is now available"
    # no <b>, no script, entities decoded
    assert release.text == (
        "The second maintenance release of Python 3.14 fixes a crash in the "
        "free-threaded garbage collector.\n\nUpgrade & enjoy."
    )
    assert release.published == _at("2026-12-01T16:30:00")
    assert summit.published == _at("2026-06-10T09:00:00")
    assert security.published is None  # the feed gives no date: none is invented
    assert release.uid == parse.uid("tag:pythoninsider,2026:post-3142")  # the GUID, not the link
    assert security.uid == parse.uid(security.link or "")  # no GUID: the link


def test_atom_entries_prefer_the_published_date_and_strip_html_titles() -> None:
    feed = _parsed("atom.xml", "application/atom+xml")
    release, ga = feed.entries
    assert release.title == "Valkey 9.1: hash field expiration and faster replication"
    assert "p{color:red}" not in release.text
    assert release.text.startswith("Valkey 9.1 adds per-field")
    assert release.published == _at("2026-11-18T08:00:00")
    assert ga.published == _at("2026-10-02T13:30:00")  # +02:00 normalised to UTC


def test_rss1_rdf_entries() -> None:
    feed = _parsed("rss1.rdf", "application/rdf+xml")
    assert [e.link for e in feed.entries] == [
        "https://lwn.example.net/Articles/990001/",
        "https://lwn.example.net/Articles/990002/",
    ]
    assert feed.entries[0].published == _at("2026-11-27T10:15:00")
    assert feed.entries[1].published is None


def test_a_podcast_keeps_its_enclosures_and_the_show_notes_as_text() -> None:
    (episode,) = _parsed("podcast.xml").entries
    assert episode.enclosures == ("https://cdn.talkpython.example.fm/episodes/512.mp3",)
    assert episode.link is None
    assert episode.uid == parse.uid("a6d1c9b0-talkpython-512")
    assert "flame graphs of event loops" in episode.text
    assert "py-spy\n\naustin" in episode.text
    assert episode.published == _at("2026-11-23T16:00:00")


def test_a_bozo_feed_keeps_what_parsed_and_records_the_error() -> None:
    feed = _parsed("malformed.xml", "text/xml")
    assert feed.error is not None
    assert "not well-formed" in feed.error
    assert next(e.title for e in feed.entries) == "Migrating a monolith to services & back"
    assert feed.entries[0].published is None  # "not a date at all" is not turned into a date


def test_something_that_is_not_a_feed_is_an_error() -> None:
    with pytest.raises(FeedError, match="not an RSS or Atom feed"):
        _parsed("garbage.xml", "text/xml")


def test_the_excerpt_is_the_title_and_the_start_of_the_text_cut_at_a_word() -> None:
    entry = parse.Entry(uid="u", title="Title", link=None, text="word " * 1000)
    excerpt = entry.excerpt(limit=100)
    assert excerpt.startswith("Title\n\nword word")
    assert excerpt.endswith("word …")
    assert len(excerpt) < 120


@pytest.mark.parametrize(
    ("markup", "text"),
    [
        ("<p>a</p><p>b</p>", "a\n\nb"),
        ("x<script>evil()</script>y<style>p{}</style>z", "xyz"),
        ("&lt;b&gt; stays text &amp; more", "<b> stays text & more"),
        ("tab\there\x00\x07 and  spaces", "tab here and spaces"),
        ("<img src=x onerror=alert(1)>caption", "caption"),
    ],
)
def test_strip_html_keeps_only_text(markup: str, text: str) -> None:
    assert parse.strip_html(markup) == text
