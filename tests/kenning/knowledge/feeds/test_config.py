"""feeds.yml: valid feeds load; every bad entry is left out with its line, never the others."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.core.errors import InvalidInput
from kenning.knowledge.feeds import config
from kenning.knowledge.feeds.config import Feed

GOOD = """\
# the team's feeds
feeds:
  - name: python-news
    url: https://pythoninsider.example.org/feeds/posts/default?alt=rss
    topics: [python, releases]
    project: Kenning-API
    interval_minutes: 60
  - name: lwn
    url: https://lwn.example.net/headlines/rss
    mode: summary
    enabled: false
    retention_days: null
"""


def test_a_valid_file_loads_every_feed_with_defaults() -> None:
    book = config.parse(GOOD)
    assert book.problems == ()
    python, lwn = book.feeds
    assert (
        python.name,
        python.topics,
        python.project,
        python.interval_minutes,
        python.mode,
        python.enabled,
        python.retention_days,
    ) == ("python-news", ("python", "releases"), "kenning-api", 60.0, "excerpt", True, 90)
    assert (lwn.mode, lwn.enabled, lwn.retention_days, lwn.interval_minutes, lwn.project) == (
        "summary",
        False,
        None,
        360.0,
        None,
    )


@pytest.mark.parametrize(
    ("entry", "line", "words"),
    [
        ("  - name: bad\n    url: file:///etc/passwd\n", 4, "url"),
        ("  - name: bad\n    url: https://x.example/\n    mode: tldr\n", 4, "mode"),
        ("  - name: bad\n    url: https://x.example/\n    interval_minutes: 1\n", 4, "interval"),
        ("  - name: bad\n    url: https://x.example/\n    topics: ['no spaces']\n", 4, "topics"),
        ("  - name: bad\n    url: https://x.example/\n    colour: blue\n", 4, "colour"),
        ("  - name: Bad Name\n    url: https://x.example/\n", 4, "name"),
    ],
)
def test_a_bad_entry_is_left_out_with_its_line_and_the_others_load(
    entry: str, line: int, words: str
) -> None:
    source = (
        "feeds:\n  - name: first\n    url: https://a.example/feed\n"
        + entry
        + "  - name: last\n    url: https://b.example/feed\n"
    )
    book = config.parse(source)
    assert [f.name for f in book.feeds] == ["first", "last"]
    assert len(book.problems) == 1
    problem = book.problems[0]
    assert problem.line == line
    assert words in problem.message
    assert str(problem).startswith(f"line {line}")


def test_a_second_feed_with_a_name_in_use_is_left_out() -> None:
    book = config.parse(GOOD + "  - name: lwn\n    url: https://elsewhere.example/rss\n")
    assert [f.name for f in book.feeds] == ["python-news", "lwn"]
    assert book.get("lwn").url == "https://lwn.example.net/headlines/rss"  # type: ignore[union-attr]
    assert [(p.line, "used by an earlier feed" in p.message) for p in book.problems] == [(13, True)]


def test_a_named_bad_entry_is_reported_under_its_name() -> None:
    book = config.parse("feeds:\n  - name: broken\n    url: gopher://old.example/\n")
    assert book.feeds == ()
    problem = book.problem_of("broken")
    assert problem is not None
    assert "http://" in problem.message


@pytest.mark.parametrize(
    ("source", "line", "words"),
    [
        ("feeds:\n  - name: a\n    url: [unclosed\n", 4, "not valid YAML"),
        ("- name: a\n  url: https://a.example/\n", 1, "`feeds:` list"),
        ("feeds: {name: a}\n", 1, "list of feeds"),
    ],
)
def test_a_broken_file_yields_no_feeds_and_one_problem(source: str, line: int, words: str) -> None:
    book = config.parse(source)
    assert book.feeds == ()
    assert len(book.problems) == 1
    assert words in book.problems[0].message
    assert book.problems[0].line == line


def test_a_missing_file_is_an_empty_book(tmp_path: Path) -> None:
    assert config.load(tmp_path / "feeds.yml") == config.FeedBook()


def test_append_then_disable_edit_the_file_and_keep_its_comments(tmp_path: Path) -> None:
    path = tmp_path / "feeds.yml"
    path.write_text(GOOD, encoding="utf-8")
    valkey = Feed(name="valkey", url="https://valkey.example.io/blog/atom.xml", topics=("valkey",))
    config.append(path, valkey)
    assert config.load(path).get("valkey") is not None
    assert config.load(path).get("valkey").enabled  # type: ignore[union-attr]
    config.disable(path, "valkey")
    config.disable(path, "python-news")
    config.disable(path, "lwn")  # already has `enabled: false`: stays one line
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# the team's feeds\n")
    book = config.load(path)
    assert book.problems == ()
    assert [(f.name, f.enabled) for f in book.feeds] == [
        ("python-news", False),
        ("lwn", False),
        ("valkey", False),
    ]
    assert text.count("enabled:") == 3


def test_append_refuses_a_name_in_use_and_disable_an_unknown_name(tmp_path: Path) -> None:
    path = tmp_path / "feeds.yml"
    config.append(path, Feed(name="lwn", url="https://lwn.example.net/headlines/rss"))
    assert config.load(path).get("lwn") is not None  # positive control: the first add worked
    with pytest.raises(InvalidInput, match="exists"):
        config.append(path, Feed(name="lwn", url="https://other.example/rss"))
    with pytest.raises(InvalidInput, match="no feed named 'nope'"):
        config.disable(path, "nope")
