"""The fetcher against a local feed server: conditional GET, caps, deadlines, redirects and the SSRF
guard on every hop. The server (tests/feeds_server.py) is the only fake: the remote side of the
process edge."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from kenning import __version__
from kenning.core.errors import FeedError
from kenning.core.settings import Settings
from kenning.knowledge.feeds import guard
from kenning.knowledge.feeds.fetch import Conditional, Fetcher, retry_after_seconds
from tests.conftest import make_settings
from tests.feeds_server import ETAG, LAST_MODIFIED, FeedServer, make_tls, serve_tls


def _fetcher(tmp_path: Path, server: FeedServer, **overrides: Any) -> Fetcher:
    values: dict[str, Any] = {
        "feed_allow": server.allow,
        "feed_max_mb": 1.0,
        "feed_timeout_seconds": 2.0,
    }
    values.update(overrides)
    settings: Settings = make_settings(tmp_path, 6390, **values)
    return Fetcher(settings)


def test_a_feed_is_fetched_with_a_kenning_user_agent(
    tmp_path: Path, feed_server: FeedServer
) -> None:
    fetched = _fetcher(tmp_path, feed_server).fetch(feed_server.url("/rss2.xml"))
    assert fetched.modified
    assert b"Python Insider" in fetched.body
    (seen,) = feed_server.hits("/rss2.xml")
    assert seen.headers["user-agent"].startswith(f"Kenning/{__version__}")
    assert seen.headers["host"] == f"127.0.0.1:{feed_server.port}"


def test_an_unchanged_feed_answers_304_by_etag(tmp_path: Path, feed_server: FeedServer) -> None:
    fetcher = _fetcher(tmp_path, feed_server)
    first = fetcher.fetch(feed_server.url("/etag.xml"))
    assert first.modified
    assert first.validators == Conditional(ETAG, None)
    second = fetcher.fetch(feed_server.url("/etag.xml"), first.validators)
    assert (second.modified, second.body) == (False, b"")
    assert feed_server.hits("/etag.xml")[1].headers["if-none-match"] == ETAG


def test_an_unchanged_feed_answers_304_by_last_modified(
    tmp_path: Path, feed_server: FeedServer
) -> None:
    fetcher = _fetcher(tmp_path, feed_server)
    first = fetcher.fetch(feed_server.url("/last-modified.xml"))
    assert first.modified
    assert first.validators == Conditional(None, LAST_MODIFIED)
    assert not fetcher.fetch(feed_server.url("/last-modified.xml"), first.validators).modified


def test_a_redirect_to_the_allowed_server_is_followed(
    tmp_path: Path, feed_server: FeedServer
) -> None:
    fetched = _fetcher(tmp_path, feed_server).fetch(feed_server.url("/moved.xml"))
    assert (fetched.url, fetched.hops) == (feed_server.url("/rss2.xml"), 1)


@pytest.mark.parametrize(
    ("path", "words"),
    [
        ("/error.xml", "HTTP 500"),
        ("/busy.xml", "HTTP 429; it asks to wait 7200 s"),
        ("/loop-a.xml", "redirect loop"),
        ("/page.html", "'text/html', not a feed"),
        ("/big.xml", "larger than 1 MiB"),
        ("/drip.xml", "too slowly"),
        ("/to-metadata.xml", "169.254.169.254, not a global address"),
    ],
)
def test_each_bad_answer_is_a_feed_error(
    tmp_path: Path, feed_server: FeedServer, path: str, words: str
) -> None:
    with pytest.raises(FeedError) as info:
        _fetcher(tmp_path, feed_server).fetch(feed_server.url(path))
    assert words in str(info.value)
    if path == "/busy.xml":
        assert info.value.retry_after == 7200.0


def test_a_redirect_to_another_loopback_port_is_refused_before_any_connection(
    tmp_path: Path, feed_server: FeedServer
) -> None:
    other = FeedServer()
    other.thread.start()
    try:
        feed_server.redirect("/to-loopback.xml", other.url("/rss2.xml"))
        both = f"{feed_server.allow},{other.allow}"
        allowed_both = _fetcher(tmp_path, feed_server, feed_allow=both)
        assert allowed_both.fetch(feed_server.url("/to-loopback.xml")).modified  # positive control
        assert len(other.hits("/rss2.xml")) == 1
        refused = re.escape("resolves to 127.0.0.1, not a global address")
        with pytest.raises(FeedError, match=refused):
            _fetcher(tmp_path, feed_server).fetch(feed_server.url("/to-loopback.xml"))
        assert len(other.hits("/rss2.xml")) == 1  # the refused hop never reached it
    finally:
        other.close()


def test_a_name_resolving_to_a_private_address_is_refused(
    tmp_path: Path, feed_server: FeedServer
) -> None:
    fetcher = _fetcher(tmp_path, feed_server, feed_allow="")
    refused = re.escape("localhost resolves to 127.0.0.1, not a global address")
    with pytest.raises(FeedError, match=refused):
        fetcher.fetch(feed_server.url("/rss2.xml", host="localhost"))
    assert feed_server.requests == []
    allowed = _fetcher(tmp_path, feed_server, feed_allow=f"localhost:{feed_server.port}")
    # the allowlist names it
    assert allowed.fetch(feed_server.url("/rss2.xml", host="localhost")).modified


def test_the_connection_goes_to_the_address_resolved_once(
    tmp_path: Path, feed_server: FeedServer
) -> None:
    """A resolver that answers otherwise the second time (DNS rebinding) is asked once per hop."""
    answers = [guard.resolve("127.0.0.1", 0), guard.resolve("169.254.169.254", 0)]
    calls: list[str] = []

    def rebinding(host: str, port: int) -> tuple[guard.Address, ...]:
        calls.append(host)
        return answers[min(len(calls) - 1, 1)]

    settings = make_settings(tmp_path, 6390, feed_allow=feed_server.allow)
    fetcher = Fetcher(settings, resolver=rebinding)
    fetched = fetcher.fetch(feed_server.url("/rss2.xml", host="feeds.test"))
    assert fetched.modified
    assert calls == ["feeds.test"]
    assert feed_server.hits("/rss2.xml")[0].headers["host"] == f"feeds.test:{feed_server.port}"


def test_retry_after_reads_seconds_and_http_dates() -> None:
    assert retry_after_seconds("120") == 120.0
    at = datetime(2026, 12, 2, 1, 0, tzinfo=UTC).timestamp()
    assert retry_after_seconds("Wed, 02 Dec 2026 01:00:00 GMT", now=at - 3600) == 3600.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


def _loopback(host: str, port: int) -> tuple[guard.Address, ...]:
    """A DNS answer for the test: every name is 127.0.0.1."""
    return guard.resolve("127.0.0.1", 0)


def test_https_connects_to_the_checked_address_and_verifies_the_host_name(tmp_path: Path) -> None:
    """The request goes to the pinned IP while SNI and the certificate check use the feed's host."""
    server = FeedServer()
    tls = make_tls(tmp_path, "feeds.test")
    sni = serve_tls(server, tls)
    server.thread.start()
    try:
        settings = make_settings(tmp_path, 6390, feed_allow=server.allow)
        url = f"https://feeds.test:{server.port}/rss2.xml"
        fetched = Fetcher(settings, resolver=_loopback, verify=tls.client_context()).fetch(url)
        assert fetched.modified
        assert b"Python Insider" in fetched.body
        assert sni == ["feeds.test"]
        assert server.hits("/rss2.xml")[0].headers["host"] == f"feeds.test:{server.port}"
        (tmp_path / "other").mkdir()
        other = make_tls(tmp_path / "other", "elsewhere.test")
        with pytest.raises(FeedError, match=re.escape("CERTIFICATE_VERIFY_FAILED")):  # untrusted
            Fetcher(settings, resolver=_loopback, verify=other.client_context()).fetch(url)
    finally:
        server.close()
