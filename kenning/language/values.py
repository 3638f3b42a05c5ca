"""Value changes: the same subject and slot stated with a different value. Pure: no I/O.

The most common contradiction in engineering memory is not "do X" against "do not X" (that is
``kenning.language.polarity``) but a new value for the same thing: "Postgres runs on port 5433" then
"Postgres now runs on 5432". A statement is read as (subject, slot, value) facts, one per clause:

- the **slot** is one of ``SLOTS`` (port, version, path, host, command, owner, schedule), found by a
  fixed pattern (``_RULES``); the **value** is what the pattern captured, normalised;
- the **subject** is the clause's object words (``kenning.language.polarity`` style: stop words,
predicates
  and the slot's own words removed) with the values taken out.

Two statements disagree when a fact of each has the same slot, subjects that are about the same
thing (one's words contain the other's: "billing batch job" and "search batch job" are two
subjects), and different values -- unless the two statements also agree on that slot and subject
somewhere (one of them names both values, e.g. "5433, not 5432"). A value that follows "not",
"from", "instead of", "no longer" or "was" is the old value, not the one asserted, and is skipped.
Deterministic rules, no model: a pair it cannot explain by a shared subject and slot is never
flagged (docs/truth-maintenance.md).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kenning.language.polarity import NEGATIONS, PREDICATES, STOP_WORDS, stem

SLOTS: tuple[str, ...] = ("port", "version", "path", "host", "command", "owner", "schedule")
_DAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
# Each rule: slot, pattern with one group (the value), the words that name the
# slot (not subject words).
_RULES: tuple[tuple[str, re.Pattern[str], frozenset[str]], ...] = (
    (
        "port",
        re.compile(
            r"\bport\s*:?\s*(\d{2,5})\b|(?:localhost|\w[\w.-]*\.\w+):(\d{2,5})\b"
            r"|\b(?:runs?|running|listens?|listening|serves?|served|bound|binds?)"
            r"\s+on\s+:?(\d{3,5})\b"
        ),
        frozenset({"port", "listen", "listening", "serve", "served", "bound", "bind", "localhost"}),
    ),
    (
        "version",
        re.compile(
            r"(?:==|@|\bv|\bversion\s+|\bto\s+|\bat\s+|\bon\s+)?"
            r"(\d+\.\d+(?:\.\d+)?(?:[a-z]+\d*)?)\b(?!\.\d)"
        ),
        frozenset(
            {
                "version",
                "pin",
                "pinned",
                "pins",
                "upgraded",
                "upgrade",
                "bumped",
                "bump",
                "downgraded",
                "release",
            }
        ),
    ),
    (
        "path",
        re.compile(r"(?<![\w/])((?:~|\.{1,2})?/[\w.\-]+(?:/[\w.\-]+)+/?)"),
        frozenset({"path", "directory", "dir", "folder"}),
    ),
    (
        "host",
        re.compile(
            r"\b((?:\d{1,3}\.){3}\d{1,3}"
            r"|[a-z][\w-]*(?:\.[\w-]+)*\.(?:internal|local|lan|com|net|org|io|dev|cloud))\b"
        ),
        frozenset(
            {"host", "hostname", "server", "address", "point", "points", "pointing", "resolve"}
        ),
    ),
    (
        "command",
        re.compile(r"`([^`]{2,120})`"),
        frozenset({"command", "run", "runs", "type", "invoke"}),
    ),
    (
        "owner",
        re.compile(
            r"\b(?:owned|maintained|run|led)\s+by\s+([A-Z][\w-]+)"
            r"|\b([A-Z][\w-]+)\s+(?:now\s+)?owns\b"
            r"|\bowner\s+(?:is|:)\s+(?:now\s+)?([A-Z][\w-]+)"
        ),
        frozenset({"owned", "owner", "owns", "maintained", "led", "maintainer"}),
    ),
    (
        "schedule",
        re.compile(
            rf"\b(?:at\s+)?(\d{{1,2}}:\d{{2}}(?:\s?[ap]m)?|\d{{1,2}}\s?[ap]m)\b"
            rf"|\bevery\s+((?:other\s+)?(?:{_DAYS}|day|night|hour|week|month|weekday))\b"
            rf"|\bon\s+((?:{_DAYS})s)\b",
            re.IGNORECASE,
        ),
        frozenset(
            {
                "every",
                "daily",
                "weekly",
                "nightly",
                "schedule",
                "scheduled",
                "runs",
                "run",
                "at",
                "cron",
            }
        ),
    ),
)
# A value right after these words is the old one the statement moves away
# from, not the one it asserts.
_OLD = re.compile(
    r"(?:\bnot|\bfrom|\binstead of|\bno longer|\bwas|\bformerly|\breplacing|\bno more)\s*\(?\s*$",
    re.IGNORECASE,
)
_CLAUSES = re.compile(r"[;!?\n]+|\.(?:\s+|$)|,\s*(?:but|however|whereas|while)\b")
_WORD = re.compile(r"[a-z0-9][a-z0-9+#._/-]*")
_NOISE = frozenset({"now", "new", "old", "workaround", "default", "local", "today", "currently"})


@dataclass(frozen=True)
class Fact:
    """One (subject, slot, value) read from a clause."""

    slot: str
    value: str
    subject: frozenset[str]


@dataclass(frozen=True)
class ValueChange:
    """Why two statements disagree: the slot, the subject words and the value each gives."""

    slot: str
    subject: tuple[str, ...]
    old: str
    new: str

    def evidence(self) -> dict[str, object]:
        return {
            "kind": "value_change",
            "slot": self.slot,
            "subject": list(self.subject),
            "old_value": self.old,
            "new_value": self.new,
        }


def facts(text: str) -> tuple[Fact, ...]:
    """The (subject, slot, value) facts of a statement, clause by clause."""
    out: list[Fact] = []
    for clause in _CLAUSES.split(text):
        if clause and clause.strip():
            out += _clause_facts(clause)
    return tuple(dict.fromkeys(out))


def _clause_facts(clause: str) -> list[Fact]:
    out: list[Fact] = []
    for slot, pattern, slot_words in _RULES:
        values = [
            _value(slot, m)
            for m in pattern.finditer(clause)
            if not _OLD.search(clause[: m.start()])
        ]
        values = [v for v in values if v]
        if not values:
            continue
        taken = {w for m in pattern.finditer(clause) for w in _WORD.findall(m[0].lower())}
        subject = _subject(clause, taken | slot_words, slot_words)
        if subject:
            out += [Fact(slot=slot, value=v, subject=subject) for v in values]
    return out


def _value(slot: str, match: re.Match[str]) -> str:
    raw = next((g for g in match.groups() if g), "")
    value = " ".join(raw.split()).lower() if slot != "owner" else raw
    if slot == "version" and value.count(".") == 3:  # an IPv4 address is a host, not a version
        return ""
    return value.rstrip("/").lower() if slot == "path" else value.lower()


def _subject(clause: str, taken: set[str], slot_words: frozenset[str]) -> frozenset[str]:
    words = _WORD.findall(clause.lower())
    # A number beside the subject's noun names it ("service 17" and "service 18" are two subjects),
    # so a bare number stays; other words with digits are values of some slot and are left out.
    kept = (
        stem(w.strip("._/-"))
        for w in words
        if w not in taken
        and w not in NEGATIONS
        and w not in STOP_WORDS
        and w not in _NOISE
        and (len(w) > 1 or w.isdigit())
        and (w.isdigit() or not any(c.isdigit() for c in w))
    )
    # "listens" -> "listen"
    return frozenset(w for w in kept if w not in PREDICATES and w not in slot_words)


def same_subject(a: frozenset[str], b: frozenset[str]) -> bool:
    """One subject's words contain the other's ("billing service" and "search service" are two
    subjects; sharing most words is not enough: "billing batch job" and "search batch job" differ
    in the one that matters)."""
    shared = a & b
    return bool(shared) and (a <= b or b <= a)


def change(older: str, newer: str) -> ValueChange | None:
    """The first slot where ``newer`` gives the same subject another
    value than ``older``, or None."""
    old_facts, new_facts = facts(older), facts(newer)
    for new in new_facts:
        matching = [
            old
            for old in old_facts
            if old.slot == new.slot and same_subject(old.subject, new.subject)
        ]
        if not matching or any(old.value == new.value for old in matching):
            continue  # nothing about that subject and slot, or the two agree on it
        if any(o.value == new.value for o in old_facts if o.slot == new.slot):
            # the older statement names that value too (under another subject): not a change
            continue
        old = matching[0]
        return ValueChange(
            slot=new.slot,
            subject=tuple(sorted(old.subject & new.subject)),
            old=old.value,
            new=new.value,
        )
    return None
