"""`kenning feeds list|check|fetch|add|disable` through the real entry point (``main``), against the
real store; the feed server is the only fake."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.knowledge.feeds import config
from kenning.memory.listing import Listing
from kenning_cli.main import load_commands, main
from tests.feeds_server import FeedServer

load_commands()


@pytest.fixture
def feeds_file(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Settings, feed_server: FeedServer
) -> Path:
    monkeypatch.chdir(tmp_path)  # no developer .env leaks in
    path = tmp_path / "feeds.yml"
    for name, value in (
        ("DATA_DIR", settings.data_dir),
        ("VALKEY_PORT", settings.valkey_port),
        ("KEY_PREFIX", settings.key_prefix),
        ("FEEDS_FILE", path),
        ("FEED_ALLOW", feed_server.allow),
        ("LOG_LEVEL", "WARNING"),
    ):
        monkeypatch.setenv(f"KENNING_{name}", str(value))
    return path


def test_add_list_and_disable(
    feeds_file: Path, feed_server: FeedServer, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "feeds",
                "add",
                "news",
                feed_server.url("/rss2.xml"),
                "--topics",
                "python,releases",
                "--interval-minutes",
                "60",
            ]
        )
        == 0
    )
    feed = config.load(feeds_file).get("news")
    assert feed is not None
    assert feed.topics == ("python", "releases")
    assert (feed.interval_minutes, feed.enabled) == (60.0, True)
    capsys.readouterr()
    assert main(["feeds", "list"]) == 0
    assert "news: enabled; " in capsys.readouterr().out
    assert main(["feeds", "disable", "news"]) == 0
    capsys.readouterr()
    assert main(["feeds", "list"]) == 0
    assert "news: disabled; " in capsys.readouterr().out


def test_add_refuses_an_invalid_feed_and_writes_nothing(
    feeds_file: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["feeds", "add", "news", "file:///etc/passwd"]) == 1
    assert "http:// or https://" in capsys.readouterr().err
    assert not feeds_file.exists()


def test_the_error_of_a_failed_fetch_and_of_a_bad_entry_is_visible_in_list(
    feeds_file: Path, feed_server: FeedServer, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    meta = feed_server.url("/to-metadata.xml")
    feeds_file.write_text(
        f"feeds:\n  - name: meta\n    url: {meta}\n"
        "  - name: broken\n    url: gopher://old.example/\n",
        encoding="utf-8",
    )
    tuned = Settings(_env_file=None)  # the environment the fixture set: the same store and file
    ctx = engine.ctx
    feeds = Engine.open(tuned, ctx.store.client, ctx.embedder, clock=ctx.clock).feeds
    assert feeds.run(feeds.feed("meta")).outcome == "failed"
    assert main(["feeds", "list"]) == 0
    out = capsys.readouterr().out
    assert "meta: enabled;" in out
    assert "1 failure(s) in a row" in out
    assert "last error: refused" in out
    assert "169.254.169.254, not a global address" in out
    assert "broken: ERROR in feeds.yml, disabled: line 4 (feed broken): url:" in out


def test_check_validates_the_file_and_runs_the_guard(
    feeds_file: Path, feed_server: FeedServer, capsys: pytest.CaptureFixture[str]
) -> None:
    feeds_file.write_text(
        f"feeds:\n  - name: news\n    url: {feed_server.url('/rss2.xml')}\n", encoding="utf-8"
    )
    assert main(["feeds", "check"]) == 0  # positive control: the allowed server passes
    assert "ok    news: 127.0.0.1 -> 127.0.0.1" in capsys.readouterr().out
    more = "  - name: local\n    url: http://localhost:9/feed\n  - name: bad\n    url: x\n"
    feeds_file.write_text(feeds_file.read_text(encoding="utf-8") + more, encoding="utf-8")
    assert main(["feeds", "check"]) == 1
    out = capsys.readouterr().out
    assert "ERROR local: refused" in out
    assert "ERROR line 6 (feed bad)" in out
    assert "2 feed(s) valid, 1 invalid, 1 refused" in out


def test_fetch_ingests_one_feed_now(
    feeds_file: Path, feed_server: FeedServer, engine: Engine, capsys: pytest.CaptureFixture[str]
) -> None:
    feeds_file.write_text(
        f"feeds:\n  - name: news\n    url: {feed_server.url('/rss2.xml')}\n", encoding="utf-8"
    )
    assert main(["feeds", "fetch", "news"]) == 0
    assert "news: 3 new, 0 already stored" in capsys.readouterr().out
    page = engine.memories.list(Listing(namespaces=["knowledge"], kinds=["article"]))
    assert page.total == 3
    assert main(["feeds", "fetch", "absent"]) == 1
    assert "no feed named 'absent'" in capsys.readouterr().err
