"""Dates and periods named in a query, relative to a fixed clock (2026-09-21, a Monday)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from kenning.core.models import iso
from kenning.language import temporal
from kenning.memory import scoring

NOW = datetime(2026, 9, 21, 14, 13, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("what broke last Tuesday", "2026-09-15", "2026-09-16"),
        ("on friday we deployed", "2026-09-18", "2026-09-19"),
        ("the 2026-03-14 outage", "2026-03-14", "2026-03-15"),
        ("yesterday's incident", "2026-09-20", "2026-09-21"),
        ("today", "2026-09-21", "2026-09-22"),
        ("last week", "2026-09-14", "2026-09-21"),
        ("this week", "2026-09-21", "2026-09-28"),
        ("last month", "2026-08-01", "2026-09-01"),
        ("in March we moved", "2026-03-01", "2026-04-01"),
        ("in October", "2025-10-01", "2025-11-01"),
        ("deploy in may", "2026-05-01", "2026-06-01"),
        ("March 14", "2026-03-14", "2026-03-15"),
        ("14th March", "2026-03-14", "2026-03-15"),
        ("December 2024 release", "2024-12-01", "2025-01-01"),
        ("2025-11", "2025-11-01", "2025-12-01"),
        ("3 days ago", "2026-09-18", "2026-09-19"),
        ("last year", "2025-01-01", "2026-01-01"),
    ],
)
def test_named_periods(text: str, start: str, end: str) -> None:
    period = temporal.target(text, NOW)
    assert period is not None
    assert (iso(period.start), iso(period.end)) == (f"{start}T00:00:00Z", f"{end}T00:00:00Z")


@pytest.mark.parametrize(
    "text", ["may I ask about redis", "the dec decision", "port 6390 is busy", "marching orders"]
)
def test_queries_without_a_date(text: str) -> None:
    assert temporal.target(text, NOW) is None


def test_label_names_the_words() -> None:
    period = temporal.target("What did we decide last Tuesday?", NOW)
    assert period is not None
    assert period.label == "last tuesday"


def test_temporal_window_factor() -> None:
    day = 86_400.0
    start, end = NOW, NOW + day
    assert scoring.temporal_window(NOW + 3600, start, end) == 1.5
    assert scoring.temporal_window(NOW - 5 * day, start, end) == 1.5
    assert scoring.temporal_window(NOW - 60 * day, start, end) == 1.0
    assert 1.0 < scoring.temporal_window(NOW + 30 * day, start, end) < 1.5
    assert scoring.temporal_window(None, start, end) == 1.0


@pytest.mark.parametrize(
    ("text", "day"),
    [
        ("What did we decide on October 13, 2023?", "2023-10-13"),
        ("on 1 May, 2022", "2022-05-01"),
        ("13th of October 2023", "2023-10-13"),
        ("May 1st 2022 retro", "2022-05-01"),
        ("oct 13, 2023", "2023-10-13"),
        ("the sync on 2 February 2027", "2027-02-02"),  # a named year is kept even in the future
    ],
)
def test_a_day_with_its_year(text: str, day: str) -> None:
    period = temporal.target(text, NOW)
    assert period is not None
    assert iso(period.start) == f"{day}T00:00:00Z"
    assert period.end - period.start == 86_400.0


def test_a_day_without_a_year_is_still_the_most_recent_one() -> None:
    period = temporal.target("what did we decide on October 13?", NOW)  # NOW is 2026-09-21
    assert period is not None
    assert iso(period.start) == "2025-10-13T00:00:00Z"


@pytest.mark.parametrize(
    ("text", "start", "end"),
    [
        ("What happened in November 2024?", "2024-11-01", "2024-12-01"),
        ("in 2024", "2024-01-01", "2025-01-01"),
        ("incidents in 2024", "2024-01-01", "2025-01-01"),
        ("in July of 2023", "2023-07-01", "2023-08-01"),
        ("What did we ship in Q3 2025?", "2025-07-01", "2025-10-01"),
        ("q4 of 2024", "2024-10-01", "2025-01-01"),
        ("What happened between May and July 2023?", "2023-05-01", "2023-08-01"),
        ("from March to June 2024", "2024-03-01", "2024-07-01"),
        ("last March", "2026-03-01", "2026-04-01"),  # NOW is September 2026
        ("What did we decide in June 2024?", "2024-06-01", "2024-07-01"),
    ],
)
def test_years_quarters_and_ranges(text: str, start: str, end: str) -> None:
    period = temporal.target(text, NOW)
    assert period is not None
    assert (iso(period.start), iso(period.end)) == (f"{start}T00:00:00Z", f"{end}T00:00:00Z")


@pytest.mark.parametrize(
    "text",
    [
        "we decided to cap retries at three",  # "we" is not Wednesday
        "The checkout service runs on port 8080",  # nor a year
        "refunds need a second approver",  # nor a time
        "what does ERR-4312 mean?",
        "what changed in v2.14.3?",
        "Which Python version is pinned to 3.11?",
        "Where does vault-proxy keep its state?",
    ],
)
def test_words_dateparser_would_misread(text: str) -> None:
    assert temporal.target(text, NOW) is None


def test_the_year_left_open_is_the_most_recent_past_one() -> None:
    january = datetime(2026, 1, 12, tzinfo=UTC).timestamp()
    period = temporal.target("What did we decide last March?", january)
    assert period is not None
    assert iso(period.start) == "2025-03-01T00:00:00Z"
    assert temporal.remainder("What did we decide last March?", period) == "what did we decide ?"


def test_the_label_keeps_every_word_that_names_the_period() -> None:
    january = datetime(2026, 1, 12, tzinfo=UTC).timestamp()
    for text, label in (
        ("What happened in March 2025?", "march 2025"),  # "march" alone names the same span
        ("what did we decide on October 13 about the API?", "october 13"),
    ):
        period = temporal.target(text, january)
        assert period is not None
        assert period.label == label
