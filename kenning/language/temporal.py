"""Dates and periods named in a query, resolved against the clock. Pure: no I/O.

``target(query, now)`` returns the period the query names, or None.
Understood (case-insensitive, UTC):

- ISO dates: ``2026-03-14`` (that day), ``2026-03`` (that month)
- ``today``, ``yesterday``, ``N days/weeks/months ago``
- ``last week`` / ``this week`` (calendar weeks, Monday first), ``last month`` /
  ``this month``, ``last year``
- ``last Tuesday`` / ``on Tuesday`` (the most recent such day before today)
- ``October 13, 2023``, ``13 October 2023``, ``1 May, 2022``, ``May 1st
  2022`` (that day of that year)
- ``in March``, ``March 2025``, ``March 14``, ``14 March`` (the most recent March not in the future
  when no year is given)

The first phrase found (in the order above) wins. Recall turns the period into the temporal factor
(``kenning.memory.scoring.temporal_window``).
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

DAY = 86_400.0
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS.pop("may", None)  # "may" is a verb far more often than a month; "in May" is handled below
_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAY_RE = "|".join(_WEEKDAYS)
# A bare month name counts only when written in full: "mar", "dec" or "may"
# alone are usually other words.
_FULL_RE = "|".join(name.lower() for name in calendar.month_name if name and name != "May")


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


Span = tuple[float, float, str]


def _day(d: date, label: str, days: int = 1) -> Span:
    start = datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp()
    return start, start + days * DAY, label


def _month(year: int, month: int, label: str) -> Span:
    return _day(date(year, month, 1), label, calendar.monthrange(year, month)[1])


def _recent_month(month: int, today: date) -> int:
    """The year of the most recent ``month`` that is not in the future."""
    return today.year if month <= today.month else today.year - 1


def _iso(text: str, _today: date) -> Span | None:
    m = re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", text)
    if m:
        try:
            return _day(date(int(m[1]), int(m[2]), int(m[3])), m[0])
        except ValueError:
            return None
    m = re.search(r"\b(\d{4})-(\d{2})\b", text)
    if m and 1 <= int(m[2]) <= 12:
        return _month(int(m[1]), int(m[2]), m[0])
    return None


def _relative(text: str, today: date) -> Span | None:
    if m := re.search(r"\btoday\b", text):
        return _day(today, m[0])
    if m := re.search(r"\byesterday\b", text):
        return _day(today - timedelta(days=1), m[0])
    if m := re.search(r"\b(\d{1,3}) (day|week|month)s? ago\b", text):
        days = int(m[1]) * {"day": 1, "week": 7, "month": 30}[m[2]]
        return _day(today - timedelta(days=days), m[0])
    return None


def _calendar(text: str, today: date) -> Span | None:
    monday = today - timedelta(days=today.weekday())
    if m := re.search(r"\blast week\b", text):
        return _day(monday - timedelta(days=7), m[0], 7)
    if m := re.search(r"\bthis week\b", text):
        return _day(monday, m[0], 7)
    if m := re.search(r"\blast month\b", text):
        previous = today.replace(day=1) - timedelta(days=1)
        return _month(previous.year, previous.month, m[0])
    if m := re.search(r"\bthis month\b", text):
        return _month(today.year, today.month, m[0])
    if m := re.search(r"\blast year\b", text):
        return _day(date(today.year - 1, 1, 1), m[0], 365 + calendar.isleap(today.year - 1))
    if m := re.search(rf"\b(?:last|on|past) ({_WEEKDAY_RE})\b", text):
        back = (today.weekday() - _WEEKDAYS[m[1]]) % 7 or 7
        return _day(today - timedelta(days=back), m[0])
    return None


def _dated(text: str, _today: date) -> Span | None:
    """A day with its month and year: "october 13, 2023", "13 october 2023", "1 may, 2022"."""
    months = _MONTH_RE + "|may"
    m = re.search(rf"\b({months}) (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b", text) or re.search(
        rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?({months}),? (\d{{4}})\b", text
    )
    if m is None:
        return None
    name, day = (m[1], int(m[2])) if not m[1].isdigit() else (m[2], int(m[1]))
    try:
        return _day(date(int(m[3]), _MONTHS.get(name, 5), day), m[0])
    except ValueError:  # "February 30, 2023" names no day
        return None


def _named_month(text: str, today: date) -> Span | None:
    months = _MONTH_RE + "|may"
    m = re.search(rf"\b({months}) (\d{{1,2}})(?:st|nd|rd|th)?\b(?!\d)", text) or re.search(
        rf"\b(\d{{1,2}})(?:st|nd|rd|th)? ({months})\b", text
    )
    if m:
        name, day = (m[1], int(m[2])) if not m[1].isdigit() else (m[2], int(m[1]))
        month = _MONTHS.get(name, 5)
        year = _recent_month(month, today)
        if 1 <= day <= calendar.monthrange(year, month)[1]:
            return _day(date(year, month, day), m[0])
    if m := re.search(rf"\b({months}) (\d{{4}})\b", text):
        return _month(int(m[2]), _MONTHS.get(m[1], 5), m[0])
    m = re.search(rf"\b(?:in|during|since|from) ({months})\b", text) or re.search(
        rf"\b({_FULL_RE})\b", text
    )
    if m:
        month = _MONTHS.get(m[1], 5)
        return _month(_recent_month(month, today), month, m[0])
    return None


_RULES = (_iso, _dated, _relative, _calendar, _named_month)


def target(query: str, now: float) -> Period | None:
    """The period a query names (see the module docstring), or None when it names none."""
    text = " ".join(query.casefold().split())
    today = datetime.fromtimestamp(now, tz=UTC).date()
    for rule in _RULES:
        span = rule(text, today)
        if span is not None:
            return Period(start=span[0], end=span[1], label=span[2])
    return None
