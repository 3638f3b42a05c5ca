"""The shapes values take in engineers' text, and their normal forms. Pure: no I/O.

``KINDS`` finds values by shape: quantities with units ("100 req/min", "30 s", "2 GB", "two
approvals", "4 workers"), numbers and ports, versions and image tags, hosts, IPs, ``host:port``,
URLs, paths, e-mail addresses, ``#channels``, owners ("@lena", "owned by Omar Haddad"), times,
dates, schedules ("every Tuesday", "hourly") and backticked commands. ``normalise`` gives each
its comparable form: times on a 24-hour clock, dates as ``MM-DD``, schedules as ``every N unit``,
time and size quantities converted to seconds and MiB ("300 s" is "5 min", "2048 MB" is "2 GB").
Month and day names come from ``calendar``; the unit table is the one closed list.
"""

from __future__ import annotations

import calendar
import re

from kenning.language.words import lemma

_MONTH_NAMES = [m.lower() for m in calendar.month_name if m]
_MONTH_ABBR = [m.lower() for m in calendar.month_abbr if m]
_MONTH = {name: i for names in (_MONTH_NAMES, _MONTH_ABBR) for i, name in enumerate(names, 1)}
_MONTH["sept"] = 9
_MONTH_RE = "|".join(sorted(_MONTH, key=len, reverse=True))
_DAY_NAMES = [d.lower() for d in calendar.day_name]
_DAY_RE = "|".join(_DAY_NAMES)
_NUMBER_WORDS = {
    w: i
    for i, w in enumerate(
        [
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
        ]
    )
}
_NUMWORD_RE = "|".join(_NUMBER_WORDS)
# Units with a conversion to one base per family; any other unit is compared as written.
_UNITS: dict[str, tuple[str, float]] = {}
for _family, _table in (
    (
        "time",
        {
            ("ms", "msec", "millisecond"): 0.001,
            ("s", "sec", "secs", "second"): 1.0,
            ("min", "mins", "minute"): 60.0,
            ("h", "hr", "hrs", "hour"): 3600.0,
            ("d", "day"): 86400.0,
            ("w", "wk", "week"): 604800.0,
        },
    ),
    (
        "size",
        {
            ("b", "byte"): 1.0 / 1024**2,
            ("kb", "kib", "k"): 1.0 / 1024,
            ("mb", "mib", "m"): 1.0,
            ("gb", "gib", "g"): 1024.0,
            ("tb", "tib", "t"): 1024.0**2,
        },
    ),
    ("percent", {("%", "percent"): 1.0}),
):
    for _aliases, _factor in _table.items():
        for _alias in _aliases:
            _UNITS[_alias] = (_family, _factor)
_UNIT_RE = "|".join(
    sorted((re.escape(u) for u in _UNITS if len(u) > 1 or u == "%"), key=len, reverse=True)
)
_TLD = "com|net|org|io|dev|internal|local|lan|cloud|app|ai|co|eu|de|sh|me|info|us|uk|run"
_NUM = rf"(?:\d{{1,3}}(?:,\d{{3}})+|\d+(?:\.\d+)?|{_NUMWORD_RE})"
_TIME = r"\d{1,2}:\d{2}(?:\s?[ap]m)?|\d{1,2}\s?[ap]m"
_EVERY_UNIT = r"second|minute|hour|day|night|week|month|weekday|year"
# (kind, pattern): earlier kinds win where two would match at the same place.
KINDS: tuple[tuple[str, str], ...] = (
    ("command", r"`[^`]{1,120}`"),
    ("url", r"\bhttps?://[^\s,;)'\"`]+"),
    ("email", r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    ("channel", r"(?<![\w&])#[a-z][\w-]*"),
    (
        "owner",
        r"(?<![\w])@[a-z][\w.-]*[\w]"
        r"|(?<=\bby )(?:the )?(?-i:[A-Z][\w-]+(?: [A-Z][\w-]+)*)(?= team\b)?"
        r"|\b(?-i:[A-Z][\w-]+)(?= (?:now |still )?owns\b)",
    ),
    (
        "address",
        r"\b(?:localhost|\d{1,3}(?:\.\d{1,3}){3}|[a-z][\w-]*(?:\.[\w-]+)+):\d{2,5}\b",
    ),
    ("port", r"(?<![\w:]):\d{2,5}\b|(?:(?<=\bport )|(?<=\bport: )|(?<=\bport :))\d{2,5}\b"),
    ("port", r"(?:(?<=\bon )|(?<=\bto )|(?<=\bin ))(?!(?:19|20)\d\d\b)\d{4,5}(?![\w.%])"),
    ("tag", r"\b[a-z][\w.-]*:\d[\w.-]*"),
    ("host", rf"\b\d{{1,3}}(?:\.\d{{1,3}}){{3}}\b|\b[a-z0-9][\w-]*(?:\.[\w-]+)*\.(?:{_TLD})\b"),
    (
        "path",
        r"(?<![\w/.~])(?:~|\.{1,2})?/[\w.@-]+(?:/[\w.@-]+)*/?|(?<![\w/])[\w.-]+(?:/[\w.-]+){2,}/?",
    ),
    ("date", r"\b\d{4}-\d{2}-\d{2}\b"),
    ("date", rf"\b\d{{1,2}}(?:st|nd|rd|th)? (?:{_MONTH_RE})\b(?: \d{{4}})?"),
    ("date", rf"\b(?:{_MONTH_RE}) \d{{1,2}}(?:st|nd|rd|th)?\b(?:,? \d{{4}})?"),
    ("time", rf"(?:{_TIME})(?:\s?-\s?(?:{_TIME}))?"),
    (
        "schedule",
        rf"\bevery (?:other )?(?:{_NUM} )?(?:{_EVERY_UNIT}|{_DAY_RE})s?\b"
        rf"|\b(?:hourly|daily|nightly|weekly|biweekly|monthly|yearly)\b|\b(?:{_DAY_RE})s?\b",
    ),
    ("quantity", rf"(?<![\w.]){_NUM}\s?(?:{_UNIT_RE})s?(?:/[a-z]+)?(?![\w.])"),
    ("quantity", r"(?<![\w.])\d+(?:\.\d+)?\s?(?:[kmgt]b?|[smhdw]|px)(?![\w.])"),
    ("version", r"(?<![\w.-])v?\d+(?:\.\d+)+(?:[-+]?[a-z][\w.]*)?(?![\w.])|\bv\d+\b"),
    # a number that labels its subject ("fact number 2", "step 3") is part of the subject
    (
        "label",
        r"(?:(?<=\bnumber )|(?<=\bitem )|(?<=\bissue )|(?<=\bphase )|(?<=\bno\. )|(?<=\bpr )"
        r"|(?<=#))\d+\b",
    ),
    ("number", rf"(?<![\w.,-]){_NUM}(?![\w.-])"),
)
KIND_RE = re.compile(
    "|".join(f"(?P<k{i}>{pattern})" for i, (_, pattern) in enumerate(KINDS)), re.IGNORECASE
)
MEASURES = frozenset(family for family, _ in _UNITS.values())  # the families converted


def kind_of(match: re.Match[str]) -> str:
    name = match.lastgroup or "k0"
    return KINDS[int(name[1:])][0]


def normalise(kind: str, span: str) -> str:
    text = " ".join(span.split()).strip().lower()
    if kind in ("url", "path", "host"):
        return text.rstrip("/.")
    if kind == "command":
        return text.strip("`").strip()
    if kind == "owner":
        return re.sub(r"^the ", "", text.lstrip("@"))
    if kind == "port":
        return text.lstrip(":")
    if kind == "version":
        return text.lstrip("v")
    if kind == "time":
        return "-".join(_clock(t) for t in re.split(r"\s?-\s?", text))
    if kind == "date":
        return _date(text)
    if kind == "schedule":
        return _schedule(text)
    if kind == "quantity":
        return _quantity(text)
    if kind == "number":
        return _number(text)
    return text


def _number(text: str) -> str:
    if text in _NUMBER_WORDS:
        return str(_NUMBER_WORDS[text])
    value = float(text.replace(",", ""))
    return str(int(value)) if value.is_integer() else str(value)


def _clock(text: str) -> str:
    match = re.match(r"(\d{1,2})(?::(\d{2}))?\s?([ap]m)?", text)
    if match is None:
        return text
    hour, minute = int(match[1]), int(match[2] or 0)
    if match[3] == "pm" and hour < 12:
        hour += 12
    if match[3] == "am" and hour == 12:
        hour = 0
    return f"{hour:02d}:{minute:02d}"


def _date(text: str) -> str:
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        return text
    numbers = re.findall(r"\d+", text)
    month = next(_MONTH[w] for w in re.findall(r"[a-z]+", text) if w in _MONTH)
    day = int(numbers[0])
    year = f"{numbers[1]}-" if len(numbers) > 1 else ""
    return f"{year}{month:02d}-{day:02d}"


def _schedule(text: str) -> str:
    fixed = {"hourly": "hour", "daily": "day", "nightly": "day", "weekly": "week"}
    fixed.update({"biweekly": "2 week", "monthly": "month", "yearly": "year"})
    if text in fixed:
        return f"every {fixed[text]}" if " " in fixed[text] else f"every 1 {fixed[text]}"
    words = [w.rstrip("s") if w.rstrip("s") in _DAY_NAMES else w for w in text.split()]
    words = [w for w in words if w not in ("every",)]
    if len(words) == 1 and words[0] in _DAY_NAMES:
        return words[0]
    if words and words[0] in _DAY_NAMES:
        return words[0]
    count = "1"
    if words and (words[0].isdigit() or words[0] in _NUMBER_WORDS):
        count, words = _number(words[0]), words[1:]
    unit = " ".join(words).rstrip("s").replace("night", "day")
    return f"every {count} {unit}"


def _quantity(text: str) -> str:
    match = re.match(rf"({_NUM})\s?([a-z%][\w-]*)?(?:\s+per\s+([a-z]+)|/([a-z]+))?", text)
    if match is None:
        return text
    number, unit = _number(match[1]), (match[2] or "")
    per = f"/{lemma(match[3] or match[4])}" if (match[3] or match[4]) else ""
    if unit not in _UNITS:
        unit = lemma(unit.rstrip("s")) if unit.rstrip("s") in _UNITS else lemma(unit)
    family = _UNITS.get(unit)
    if family is None or per:
        return f"{number} {unit}{per}".strip()
    base = float(number) * family[1]
    return f"{base:g} {family[0]}"
