"""A recall request read and validated into a plan, and the identifiers a query names. Pure.

``plan`` reads the period a query names (kenning.language.temporal), whether it asks about that
period alone, and the identifiers it names (``identifiers``; the real ones, ``is_code``, lift the
memories that hold them: docs/recall.md).
"""

from __future__ import annotations

import calendar
import functools
import re
from dataclasses import dataclass, field
from typing import Any

from kenning.core import validation
from kenning.core.errors import InvalidInput
from kenning.core.models import GLOBAL_PROJECT, Memory, iso
from kenning.language import overlap, phrases, substance, temporal

MAX_TOP_K = 50
MAX_IDENTIFIERS = 4
_STRIP = "\"'`,;:()[]{}<>?!"
_NOT_IDENTIFIERS = frozenset(("e.g", "i.e", "etc", "a.m", "p.m"))
# Numbers ("10 days", "500"), times, years and dates are not identifiers: matching them
# verbatim would lift noise.
_PLAIN_NUMBER = re.compile(r"\d+(?:[.,:]\d+)*%?|\d{4}-\d{2}(?:-\d{2})?")
_BACKTICKED = re.compile(r"`([^`]{2,100})`")
_BACKTICKS = re.compile(r"`[^`]*`")
# a digit, an inner '_', '.', '/', '-' or '::', or a lower-then-upper case change
_IDENTIFIER_MARK = re.compile(r"\d|\w[_./\-]\w|::|[a-z][A-Z]")
_CAPITALS = re.compile(r"[A-Z]{3,}")
# what makes an identifier a real one (``is_code``): a digit, an inner '_', '/', '\\', '.' or '::'
_CODE_MARK = re.compile(r"\d|\w[_./\\]\w|::")
_CASE_CHANGE = re.compile(r"[a-z][A-Z]")
_LONG_CAPITALS = re.compile(r"[A-Z]{5,}")  # ENOENT, EACCES; "CSV", "ORM" are words
CAPITALS_ONLY = re.compile(r"[A-Z]+s?")
_SENTENCES = re.compile(r"(?:[.!?:;]|--)\s+|\n+")
_NAME_WORD = re.compile(r"\S+")
_POSSESSIVE = re.compile(r"['\u2019]s$")
_PROPER = re.compile(r"[A-Z][a-z]+")  # Terraform, Switzerland; not GraphQL, SOAP, v2 or I
# months and days are dates (kenning.language.temporal), not names a memory would hold
_CALENDAR = frozenset(
    (
        *(m.lower() for m in calendar.month_name[1:]),
        *(m.lower() for m in calendar.month_abbr[1:]),
        *(d.lower() for d in calendar.day_name),
        *(d.lower() for d in calendar.day_abbr),
        "sept",
    )
)


@dataclass(frozen=True)
class RecallRequest:
    query: str
    namespaces: tuple[str, ...] | list[str] | None = None
    projects: tuple[str, ...] | list[str] | str | None = None
    top_k: int = 5
    include_deprioritised: bool = False
    include_superseded: bool = False
    as_of: str | float | None = None
    actor: str = "unknown"
    # feed articles (kind "article"); None = KENNING_RECALL_INCLUDE_FEEDS
    include_feeds: bool | None = None


@dataclass(frozen=True)
class Plan:
    """A validated recall request."""

    text: str
    namespaces: tuple[str, ...]
    projects: tuple[str, ...]
    top_k: int
    states: tuple[str, ...]
    include_superseded: bool
    as_of: float | None
    period: temporal.Period | None = None
    period_only: bool = False  # the query names a period and (almost) nothing else
    # what is embedded: the query, or for a period alone what it asks of it ("what did we decide")
    embedded: str = ""
    identifiers: tuple[str, ...] = ()  # searched lexically
    codes: tuple[str, ...] = ()  # the real identifiers among them: a hit holding one is lifted
    names: tuple[str, ...] = ()  # proper names (not identifiers): one no memory holds is evidence
    asked: frozenset[str] = frozenset()  # a period-only question's key terms ("decide", "incident")
    actor: str = "unknown"
    notes: list[str] = field(default_factory=list)
    include_feeds: bool = True


def plan(request: RecallRequest, now: float | None = None, *, feeds_default: bool = True) -> Plan:
    text = phrases.query_text(request.query)
    states = ("active", "deprioritised") if request.include_deprioritised else ("active",)
    projects = validation.projects(request.projects)
    period = temporal.target(text, now) if now is not None else None
    rest = temporal.remainder(text, period) if period is not None else ""
    named = identifiers(text)
    only = period is not None and substance.content_words(rest) <= 1
    notes = [period_note(period, only)] if period else []
    return Plan(
        text=text,
        namespaces=validation.namespaces(request.namespaces),
        projects=(*projects, GLOBAL_PROJECT) if projects else (),
        top_k=_top_k(request.top_k),
        states=states,
        include_superseded=request.include_superseded,
        as_of=validation.timestamp("as_of", request.as_of),
        period=period,
        period_only=only,
        embedded=rest if only and substance.content_words(rest) else text,
        identifiers=named,
        codes=tuple(i for i in named if is_code(i)),
        names=proper_names(text, named),
        asked=overlap.key_terms(rest) if only else frozenset(),
        actor=request.actor or "unknown",
        notes=notes,
        include_feeds=feeds_default
        if request.include_feeds is None
        else bool(request.include_feeds),
    )


def window_public(period: temporal.Period, only: bool) -> dict[str, Any]:
    """The window a recall searched: its first and last day and the words that named it."""
    return {
        "label": period.label,
        "from": _day(period.start),
        "to": _day(period.end - 1),
        "only": only,
    }


def period_note(period: temporal.Period, only: bool) -> str:
    span = f"{_day(period.start)} to {_day(period.end - 1)}"
    if only:
        return f"'{period.label}' read as a date, {span}: the results are the memories dated then"
    searched = "memories dated then were searched too and rank higher"
    return f"'{period.label}' read as a date, {span}: {searched}"


def _day(at: float) -> str:
    return (iso(at) or "")[:10]


def says_asked(p: Plan, content: str) -> bool:
    """Whether a memory says what a period-only question asks of the period: one of its key terms
    ("what did we decide" -> "decided", "incidents" -> "Incident:"). Pure."""
    return bool(p.asked) and overlap.coverage(p.asked, content) > 0


def in_period(memory: Memory, period: temporal.Period) -> bool:
    """Whether a memory is dated inside ``period``: its ``event_date``, or ``created_at``
    without one (the date the temporal factor measures from too)."""
    at = memory.event_date if memory.event_date is not None else memory.created_at
    return period.start <= at < period.end


def _top_k(value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_TOP_K:
        raise InvalidInput(
            f"top_k must be a whole number from 1 to {MAX_TOP_K}; got {value!r}",
            hint="top_k is how many results to return; the default is 5",
        )
    return value


def identifiers(text: str) -> tuple[str, ...]:
    """Exact identifiers named in a query: `backticked` text, error codes,
    package names, paths. Pure.

    A word counts when it is backticked, or has a digit (E11000, psycopg2), an inner '_', '.',
    '/', '-' or '::' (ERR_SSL, node.js, src/app.py, react-query), a lower-then-upper case change
    (useEffect) or is an all-capitals word of 3+ letters (ENOENT). Plain numbers, times and ISO
    dates are not identifiers (dates are read by kenning.language.temporal), nor are "e.g." and
    "i.e.".
    """
    found = _BACKTICKED.findall(text)
    for raw in _BACKTICKS.sub(" ", text).split():
        word = raw.strip(_STRIP).rstrip(".")
        if len(word) < 2 or word.lower() in _NOT_IDENTIFIERS or _PLAIN_NUMBER.fullmatch(word):
            continue
        if _IDENTIFIER_MARK.search(word) or _CAPITALS.fullmatch(word):
            found.append(word)
    return tuple(dict.fromkeys(found))[:MAX_IDENTIFIERS]


def proper_names(text: str, named: tuple[str, ...] = ()) -> tuple[str, ...]:
    """Capitalised words inside a sentence of ``text`` ("Terraform", "Switzerland", "Dmitri's"
    read as "Dmitri"), not identifiers (``named``), not all capitals, not months or days. Pure.

    The first word of a sentence is skipped (any word is capitalised there), and so is "I"."""
    found: list[str] = []
    for sentence in _SENTENCES.split(_BACKTICKS.sub(" ", text)):
        for word in _NAME_WORD.findall(sentence)[1:]:
            name = _POSSESSIVE.sub("", word.strip(_STRIP).rstrip("."))
            if _PROPER.fullmatch(name) and name not in named and not _calendar(name):
                found.append(name)
    return tuple(dict.fromkeys(found))[:MAX_IDENTIFIERS]


def _calendar(word: str) -> bool:
    lower = word.lower()
    return lower in _CALENDAR or (lower.endswith("s") and lower[:-1] in _CALENDAR)


def is_code(identifier: str) -> bool:
    """Whether an identifier is a real one -- an error code, ticket id, version, path, symbol
    (``ERR-4312``, ``PAY-1834``, ``v2.14.3``, ``src/app.py``, ``ERR_SSL``, ``useEffect``,
    ``ENOENT``, backticked text) -- rather than a name written with a hyphen or in capitals
    (``vault-proxy``, ``dairy-free``, ``CSV``). Pure.

    A memory holding a real identifier of the query is lifted; one that merely holds a name is
    ranked by its similarity like any other (a name is in every memory about its service:
    lifting them all let recency pick among them)."""
    return (
        " " in identifier  # backticked text
        or _CODE_MARK.search(identifier) is not None
        or _CASE_CHANGE.search(identifier) is not None
        or _LONG_CAPITALS.fullmatch(identifier) is not None
    )


def exact(content: str, identifier: str) -> bool:
    """Whether ``content`` holds ``identifier`` verbatim (case-insensitive),
    not inside a longer word."""
    return _verbatim(identifier).search(content) is not None


@functools.lru_cache(maxsize=1024)
def _verbatim(identifier: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(identifier)}(?!\w)", flags=re.IGNORECASE)
