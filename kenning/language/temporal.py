"""Dates and periods named in a query, resolved against the clock. Pure: no I/O.

``target(query, now)`` returns the period the query names, or None. The dates are read by
dateparser (its ``search_dates`` finds the phrase, its ``DateDataParser`` says whether the phrase
names a day, a week, a month or a year), relative to ``now`` (UTC), preferring the past when a
phrase leaves the year open ("in October" in September 2026 is October 2025). Kenning adds what
dateparser does not read: quarters ("Q3 2025", "Q3 of 2025"), ranges ("between May and July 2023",
"from March to June 2024": the first end takes the year of the second) and the filter that keeps
the words it reads as dates by mistake out ("we" read as Wednesday, "may" as a verb, "port 8080" as
a year, "a second" as a time).

A period is a whole day, a calendar week (Monday first), a calendar month, a quarter, a calendar
year or a range of them. Recall fetches the memories dated inside it and turns it into the temporal
factor (``kenning.memory.scoring.temporal_window``).
"""

from __future__ import annotations

import calendar
import functools
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any

from dateparser.date import DateDataParser
from dateparser.search import search_dates

DAY = 86_400.0
FIRST_YEAR, LAST_YEAR = 1970, 2100  # a "year" outside is a port, a count or a code
_MONTH_NAMES = [name.lower() for name in calendar.month_name if name]
_WEEKDAY_NAMES = [name.lower() for name in calendar.day_name]
_ABBREVIATIONS = [name.lower() for name in calendar.month_abbr if name and name != "May"]
# A phrase is a date only when it holds one of these: a year (19xx, 20xx, also inside an ISO
# date), a month written in full (or its abbreviation next to a day or a year), a weekday in full
# or a word of relative time. Other digits (ERR-4312, port 8080, v2.14.3) never reach dateparser.
_RELATIVE = r"today|yesterday|ago|week|month|year|tomorrow"
_CUE = re.compile(
    rf"\b(?:19|20)\d\d\b|\b(?:{'|'.join(_MONTH_NAMES + _WEEKDAY_NAMES)}|{_RELATIVE})\b"
    rf"|\b(?:{'|'.join(_ABBREVIATIONS)})\.? \d",
)
# "may" is a verb far more often than a month: only "in May", "May 2024", "May 1st" are dates
_BARE_MAY = re.compile(r"^(?:the |on )?may$")
_LEADING = re.compile(r"^(?:(?:the|in|on|of|during|since|from|at|for|by)\s+)+")
_QUARTER = re.compile(r"\b(?:in |during )?q([1-4])(?:\s+of)?\s+(\d{4})\b")
_RANGE = re.compile(r"\b(?:between|from)\s+(.+?)\s+(?:and|to|until|till|through)\s+(.+)$")
_YEAR_ONLY = re.compile(r"(?:^|\s)(\d{4})$")
_YEAR = re.compile(r"\b\d{4}\b")
_DAY_NUMBER = re.compile(r"\b\d{1,2}(?:st|nd|rd|th)?\b,?")
_ISO_DAY = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_ISO_MONTH = re.compile(r"\b\d{4}-\d{2}\b")
_MONTH = re.compile(rf"\b(?:{'|'.join(_MONTH_NAMES + _ABBREVIATIONS)})\b")
_DAY_WORD = re.compile(rf"\b(?:today|yesterday|tomorrow|days?|{'|'.join(_WEEKDAY_NAMES)})\b")
_YEAR_WORD = re.compile(r"\b(?:weeks?|months?|years?)\b")
_TIME = re.compile(r"\b(?:today|yesterday|tomorrow)\b")
_SETTINGS: dict[str, Any] = {
    "PREFER_DATES_FROM": "past",
    "TIMEZONE": "UTC",
    "TO_TIMEZONE": "UTC",
    "RETURN_AS_TIMEZONE_AWARE": False,
    "PREFER_DAY_OF_MONTH": "first",
    "RETURN_TIME_AS_PERIOD": True,
}


@dataclass(frozen=True)
class Period:
    """A span of time named by a query: ``start`` <= t < ``end`` (epoch seconds),
    and the words that named it."""

    start: float
    end: float
    label: str

    @property
    def middle(self) -> float:
        return (self.start + self.end) / 2


Span = tuple[date, date]  # [first day, day after the last)


def target(query: str, now: float) -> Period | None:
    """The period a query names (see the module docstring), or None when it names none."""
    text = " ".join(query.casefold().replace("\u2019", "'").split())
    text = re.sub(r"'s\b", "", text)  # "yesterday's incident"
    if not _CUE.search(text):
        return None  # most queries: dateparser is not even asked
    # relative dates need the day only: one parser per day (building one costs more than a parse)
    base = datetime.fromtimestamp(now, tz=UTC).replace(
        tzinfo=None, hour=0, minute=0, second=0, microsecond=0
    )
    found = _quarter(text) or _range(text, base) or _first(text, base)
    if found is None:
        return None
    (first, after), label = found
    return Period(start=_epoch(first), end=_epoch(after), label=label)


def remainder(query: str, period: Period) -> str:
    """The query without the words that named ``period`` (what the question asks about)."""
    text = " ".join(query.casefold().split())
    return " ".join(text.replace(period.label, " ").split())


def _epoch(day: date) -> float:
    return datetime(day.year, day.month, day.day, tzinfo=UTC).timestamp()


def _quarter(text: str) -> tuple[Span, str] | None:
    m = _QUARTER.search(text)
    if m is None or not FIRST_YEAR <= int(m[2]) <= LAST_YEAR:
        return None
    year, quarter = int(m[2]), int(m[1])
    return (_months(year, 3 * quarter - 2, 3), m[0].strip())


def _range(text: str, base: datetime) -> tuple[Span, str] | None:
    m = _RANGE.search(text)
    if m is None:
        return None
    later = _read(m[2].rstrip("?.!"), base)
    if later is None:
        return None
    # the first end is read in the second's year: "between May and July 2023" is May 2023
    end_year = later[1] - timedelta(days=1)
    # "between May and ..." names the month May: read it as "in may"
    earlier = _read(f"in {m[1]}", datetime(end_year.year, end_year.month, end_year.day))
    if earlier is None or earlier[0] >= later[1]:
        return None
    return ((earlier[0], later[1]), m[0].rstrip("?.!"))


def _first(text: str, base: datetime) -> tuple[Span, str] | None:
    """The first phrase dateparser finds that passes the filter."""
    for phrase, moment in _search(text, base):
        label = phrase.strip(" ,.?!")
        if (span := _read(label, base, moment)) is not None:
            label = _trimmed(_LEADING.sub("", label) or label)
            # dateparser reads "last march" as "march" (the most recent past one): same span
            before = re.search(rf"\b(last|past|this) {re.escape(label)}\b", text)
            return span, before[0] if before else label
    return None


def _trimmed(label: str) -> str:
    """``label`` without the words at its end that name no date ("october 13 about the" is
    "october 13"; dateparser's search takes in the words around a date)."""
    words = label.split()
    while len(words) > 1 and not (_CUE.search(words[-1]) or _DAY_NUMBER.fullmatch(words[-1])):
        words.pop()
    return " ".join(words)


def _search(text: str, base: datetime) -> list[tuple[str, datetime]]:
    found = search_dates(text, languages=["en"], settings={**_SETTINGS, "RELATIVE_BASE": base})
    return list(found or [])


def _read(phrase: str, base: datetime, moment: datetime | None = None) -> Span | None:
    """The span one phrase names, or None when it is not a date we trust. ``moment``: the date
    ``search_dates`` read it as (then the phrase is not parsed twice: its words say whether it
    names a day, a week, a month or a year)."""
    core = _LEADING.sub("", phrase.strip(" ,.?!"))
    if not core or _BARE_MAY.match(phrase.strip(" ,.?!")) or not _CUE.search(core):
        return None
    if (year := _YEAR_ONLY.fullmatch(core)) is not None or core.isdigit():
        value = int(year[1] if year else core)
        if not FIRST_YEAR <= value <= LAST_YEAR or not _names_a_year(phrase):
            return None
        return (date(value, 1, 1), date(value + 1, 1, 1))
    if moment is not None:
        return _span(moment.date(), _grain(core), core)
    data = _parser(base).get_date_data(core)
    if data.date_obj is None or data.period == "time":
        return None
    return _span(data.date_obj.date(), str(data.period), core)


def _grain(core: str) -> str:
    """Whether a date phrase names a day, a week, a month or a year (dateparser's ``period``)."""
    if _TIME.search(core) or (_DAY_WORD.search(core) and not _YEAR_WORD.search(core)):
        return "day"
    for grain in ("week", "month", "year"):
        if re.search(rf"\b{grain}s?\b", core):
            return grain
    if _ISO_DAY.search(core):
        return "day"
    if _ISO_MONTH.search(core):
        return "month"
    if _DAY_NUMBER.search(_YEAR.sub(" ", core)):
        return "day"
    return "month" if _MONTH.search(core) else "year"


def _names_a_year(phrase: str) -> bool:
    """A bare 4-digit number is a year after "in", "of", "during", "since" or "year"."""
    return (
        re.search(
            r"\b(?:in|of|during|since|year|from|between|and|to|before|after)\s+\d{4}$", phrase
        )
        is not None
    )


def _span(day: date, period: str, core: str) -> Span | None:
    if not FIRST_YEAR <= day.year <= LAST_YEAR:
        return None
    if period == "year":
        return (date(day.year, 1, 1), date(day.year + 1, 1, 1))
    if period == "month":
        return _months(day.year, day.month)
    if period == "week":
        monday = day - timedelta(days=day.weekday())
        return (monday, monday + timedelta(days=7))
    return (day, day + timedelta(days=1))


def _months(year: int, month: int, count: int = 1) -> Span:
    last = month + count - 1
    after = date(year + last // 12, last % 12 + 1, 1)
    return (date(year, month, 1), after)


@functools.lru_cache(maxsize=64)
def _parser(base: datetime) -> DateDataParser:
    return DateDataParser(languages=["en"], settings={**_SETTINGS, "RELATIVE_BASE": base})
