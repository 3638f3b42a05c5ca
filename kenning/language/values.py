"""Value changes: the same subject stated with a different value. Pure: no I/O.

The most common contradiction in engineering memory is not "do X" against "do not X" (that is
``kenning.language.polarity``) but a new value for the same thing: "Redis listens on 6380" then
"Redis is back on 6379". Each asserting sentence (``kenning.language.words.sentences``: questions
and plans say nothing) is split into clauses, and each clause is read as typed **values** plus the
**subject** words left around them:

- values are found by shape, not by a list of slots: quantities with units ("100 req/min", "30 s",
  "2 GB", "two approvals"), bare numbers and ports, versions, hosts, IPs, ``host:port``, URLs,
  paths, e-mail addresses, ``#channels``, ``@handles`` and owners ("owned by X"), times, dates,
  schedules ("every Tuesday", "hourly"), backticked commands (``kenning.language.shapes``);
- the subject is the clause's remaining words as lemmas, without stop words, predicates, cues and
  chat filler; a clause with no subject of its own ("..., it's 10.0.3.27 now") takes the previous
  clause's;
- a value is **old** (named, not asserted) when its clause is negated ("no longer on 3307",
  "the 5433 workaround is gone"), or it follows "not", "instead of", "replaced", "formerly", "was",
  or it is the X of "from X to Y" / "X -> Y". A clause that adds ("also", "as well", "too") asserts
  nothing to compare.

Two statements are a value change when the newer asserts a value of a kind the older asserts too,
for a subject one of them contains (one's words include the other's: "billing batch job" and
"search batch job" are two subjects), the two values differ (quantities compared after unit
conversion: "300 s" is "5 min"), neither statement also gives the other's value for that subject,
and no second value of another kind differs beside it (two dated measurements are two records, not
one changed).

Values outside those shapes (tool and product names, words) change when two otherwise aligned
clauses differ by one short span (at most three words on each side) and the newer says it changed
("moved to", "switched", "now", "set to", an arrow) or both are copular ("the CDN is X").

Every ``ValueChange`` says which span changed in each statement and why it was read as old or new.
Deterministic rules, no model: a pair it cannot explain is never flagged
(docs/truth-maintenance.md).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from kenning.language.polarity import PREDICATES, STOP_WORDS, negating
from kenning.language.shapes import KIND_RE, MEASURES, kind_of, normalise
from kenning.language.words import (
    ADDITIVE,
    CHANGE_VERBS,
    CHANGE_WORDS,
    NOISE,
    lemma,
    predicate,
    sentences,
)

# kinds whose values are compared with each other
_GROUP = {"number": "number", "port": "number", "quantity": "number"}
# words that name the kind of value, not the subject ("port 5433", "the path /srv/x")
_KIND_WORDS = frozenset(
    {"port", "version", "path", "dir", "directory", "folder", "host", "hostname", "address", "ip"}
)
_KIND_WORDS |= {"url", "value", "number"}
# A value right after these (or the X of "from X to Y", "X -> Y") is the old one.
_OLD_BEFORE = re.compile(
    r"(?:\b(?:not|no longer|instead of|rather than|formerly|previously|replacing|replaced"
    r"|replace|no more|(?:moved?|moving|got|get|migrated) off|away from|was|were|used to be)\s+"
    r"(?:(?:on|in|at|to|the|port|by)\s+)*\(?\s*)$",
    re.IGNORECASE,
)
_FROM_BEFORE = re.compile(
    r"\bfrom\s+(?:(?:the|port|version)\s+)?(?:[A-Za-z][\w-]*\s+)?$", re.IGNORECASE
)

# texts whose reading is kept (each a few hundred bytes of parsed clauses)
READ_CACHE = 4096

_TO_AFTER = re.compile(r"^\s*(?:to|into|for|->|→|=>)\b|^\s*(?:->|→|=>)", re.IGNORECASE)
_ARROW_AFTER = re.compile(r"^\s*(?:->|→|=>)")
_CLAUSES = re.compile(r"[;!?\n()]+|\.(?:\s+|$)|,\s*|\b(?:but|however|whereas|while|so|because)\b")
# a noun after a bare number is its unit ("4 workers", "100 requests per minute")
_COUNT = re.compile(r"\s+([A-Za-z][\w-]*)(?:\s+per\s+([a-z]+)|/([a-z]+))?")
_TOKEN = re.compile(r"[A-Za-z0-9][\w+#.'-]*")
_COPULA = re.compile(r"(?:\b(?:is|are)\b|:|=)\s*(?:now\s+)?[^\s]", re.IGNORECASE)
# adjuncts that say when or why; the words after them are not the value
_ADJUNCT = re.compile(
    r"\b(?:since|after|because|following|due to|as of|effective|starting|until|so)\b.*$",
    re.IGNORECASE,
)
_OLD_WORDS = re.compile(
    r"\b(?:replaced|replace|replacing|instead of|rather than|not|no longer|moved off|away from)"
    r"\s+((?:the\s+)?[\w.+#-]+(?:\s+[A-Z][\w.-]*)?)"
    r"|\bfrom\s+((?:the\s+)?[\w.+#-]+(?:\s+[A-Z][\w.-]*)?)\s+(?:to|into|->|→)"
    r"|([\w.+#-]+)\s*(?:->|→)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Fact:
    """One value read from a clause: its kind (``slot``), normalised value, the subject words,
    the text it was read from and whether the clause asserts it (``old``: it names a value it
    moves away from)."""

    slot: str
    value: str
    subject: frozenset[str]
    span: str = ""
    old: bool = False
    why: str = ""  # what made it old, or the change cue that introduced it
    clause: int = 0


@dataclass(frozen=True)
class ValueChange:
    """Why two statements disagree: the kind of value, the subject words and each side's value
    and span, with the reasons the older one was read as old and the newer one as new."""

    slot: str
    subject: tuple[str, ...]
    old: str
    new: str
    old_span: str = ""
    new_span: str = ""
    why: str = ""

    def evidence(self) -> dict[str, object]:
        return {
            "kind": "value_change",
            "slot": self.slot,
            "subject": list(self.subject),
            "old_value": self.old,
            "new_value": self.new,
            "old_span": self.old_span,
            "new_span": self.new_span,
            "why": self.why,
        }


@dataclass(frozen=True)
class _Clause:
    """A clause as the aligned check reads it: content lemmas (with surface forms), whether it
    adds or negates, its change cue, whether it is copular and the words it marks as old."""

    words: tuple[str, ...]
    surface: tuple[str, ...]
    negated: bool
    additive: bool
    cue: str
    copular: int  # how many content words precede the copula ("is", ":", "="); -1: none
    old_words: frozenset[str]


def facts(text: str) -> tuple[Fact, ...]:
    """The typed values of a statement, clause by clause (old ones included, marked)."""
    out: list[Fact] = []
    for index, (clause, _) in enumerate(_read(text)):
        out += [replace_clause(f, index) for f in clause]
    return tuple(dict.fromkeys(out))


def replace_clause(fact: Fact, index: int) -> Fact:
    return Fact(fact.slot, fact.value, fact.subject, fact.span, fact.old, fact.why, index)


@functools.lru_cache(maxsize=READ_CACHE)
def _read(text: str) -> tuple[tuple[tuple[Fact, ...], _Clause], ...]:
    """The facts and the clause of each clause of ``text``. Pure, so kept per text: a remember
    compares its text with each of ~13 neighbours, and the neighbours' texts come back on the
    next remember (an edited memory is a new text: nothing to invalidate)."""
    out: list[tuple[tuple[Fact, ...], _Clause]] = []
    previous: frozenset[str] = frozenset()
    for sentence in sentences(text):
        spaced = re.sub(r"(?<=\w)=(?=\w)", " = ", sentence.replace("\u2019", "'"))
        for part in _CLAUSES.split(spaced):
            if not part or not part.strip():
                continue
            found, clause, subject = _clause(part, previous)
            previous = subject or previous
            out.append((tuple(found), clause))
    return tuple(out)


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with every character inside one of ``spans`` turned into a space."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def _clause(text: str, previous: frozenset[str]) -> tuple[list[Fact], _Clause, frozenset[str]]:
    spans = [_counted(text, m.start(), m.end(), kind_of(m)) for m in KIND_RE.finditer(text)]
    spans = [s for s in spans if s[2] != "label"]
    rest = _blanked(text, [(s, e) for s, e, _, _ in spans])
    raw = [w.lower().strip(".'-") for w in _TOKEN.findall(text)]
    negated = sum(1 for w in raw if negating(w)) % 2 == 1
    additive = bool(ADDITIVE.search(text.lower()))
    cue = _cue(raw, text)
    subject = [w for w in _words(_TOKEN.findall(rest)) if w not in _KIND_WORDS]
    # a clause that opens with its value ("5432 was taken") is about the value, not a subject
    opens = bool(spans) and not _TOKEN.findall(text[: spans[0][0]])
    inherited = frozenset(subject) or (frozenset() if opens else previous)
    found: list[Fact] = []
    for start, end, kind, span in spans:
        value = normalise(kind, span)
        if not value:
            continue
        why = _old_reason(text, start, end, negated)
        unit_words = frozenset(_words(_TOKEN.findall(span))) if kind == "quantity" else set()
        found.append(
            Fact(
                slot=kind,
                value=value,
                subject=inherited - unit_words,
                span=span.strip(),
                old=bool(why) or additive,
                why=why or ("an addition" if additive else cue),
            )
        )
    tokens = [t for t in _TOKEN.findall(_ADJUNCT.sub("", rest)) if _content(t)]
    olds = frozenset(
        lemma(w.lower())
        for m in _OLD_WORDS.finditer(text)
        for w in next(g for g in m.groups() if g).split()
    )
    clause = _Clause(
        words=tuple(lemma(t.lower()) for t in tokens),
        surface=tuple(tokens),
        negated=negated,
        additive=additive,
        cue=cue,
        copular=_copula(rest),
        old_words=olds - {"the"},
    )
    return found, clause, frozenset(subject)


_LABEL = re.compile(r"\s*(?:the\s+)?(?P<word>[A-Za-z][\w-]*)\s+", re.IGNORECASE)


def _counted(text: str, start: int, end: int, kind: str) -> tuple[int, int, str, str]:
    """A number span, widened to its unit noun when one follows ("4 workers" is a quantity); a
    bare number right after a clause's first word, more following, labels its subject
    ("Service 17 of the fleet listens on ...")."""
    head = _LABEL.fullmatch(text[:start])
    if kind == "number" and head and _content(head["word"]) and _TOKEN.search(text, end):
        return start, end, "label", text[start:end]
    if kind == "number":
        match = _COUNT.match(text, end)
        if match is not None and _content(match[1]) and match[1].islower():
            return start, match.end(), "quantity", text[start : match.end()]
    return start, end, kind, text[start:end]


def _copula(rest: str) -> int:
    match = _COPULA.search(rest)
    if match is None:
        return -1
    return sum(1 for t in _TOKEN.findall(_ADJUNCT.sub("", rest[: match.start()])) if _content(t))


def _content(token: str) -> bool:
    word = token.lower().strip(".'-")
    acronym = token.isupper() and len(token) > 1  # "US", "IT": not the pronouns
    return (
        bool(word)
        and (word not in STOP_WORDS or acronym)
        and word not in NOISE
        and word not in CHANGE_WORDS
        and not negating(word)
        and not predicate(word, PREDICATES)
        and lemma(word) not in CHANGE_VERBS
        and (len(word) > 1 or word.isdigit())
    )


def _words(tokens: list[str]) -> list[str]:
    return [lemma(t.lower().strip(".'-")) for t in tokens if _content(t)]


def _cue(words: list[str], text: str) -> str:
    if _ARROW_AFTER.search(text) or "->" in text or "→" in text:
        return "->"
    for word in words:
        if word in CHANGE_WORDS or lemma(word) in CHANGE_VERBS:
            return word
    if re.search(r"\bfrom now on\b|\bas of\b|\bthese days\b", text, re.IGNORECASE):
        return "from now on"
    return ""


def _old_reason(text: str, start: int, end: int, negated: bool) -> str:
    """Why the value at ``text[start:end]`` is an old one, or "" when the clause asserts it."""
    before, after = text[:start], text[end:]
    if negated:
        return "its clause is negated"
    if _ARROW_AFTER.search(after):
        return "it is the left side of an arrow"
    if _FROM_BEFORE.search(before):
        return "it is the X of 'from X to Y'" if _TO_AFTER.search(after) else ""
    marker = _OLD_BEFORE.search(before)
    return f"it follows {marker[0].strip()!r}" if marker else ""


def same_subject(a: frozenset[str], b: frozenset[str]) -> bool:
    """One subject's words contain the other's ("billing service" and "search service" are two
    subjects; sharing most words is not enough: "billing batch job" and "search batch job" differ
    in the one that matters)."""
    shared = a & b
    return bool(shared) and (a <= b or b <= a)


def _group(slot: str) -> str:
    return _GROUP.get(slot, slot)


def _equal(a: Fact, b: Fact) -> bool:
    if a.value == b.value:
        return True
    if _group(a.slot) == "number":
        return _bare(a.value) == _bare(b.value) and not (_unit(a.value) and _unit(b.value))
    return False


def _comparable(a: Fact, b: Fact) -> bool:
    """Same kind; for numbers the same unit, or one bare number beside a measure ("30" and
    "60 s") or beside a count of what its subject names ("retries: 3" and "5 retries")."""
    if _group(a.slot) != _group(b.slot):
        return False
    if _group(a.slot) != "number":
        return True
    ua, ub = _unit(a.value), _unit(b.value)
    if ua and ub:
        return ua == ub
    unit, bare, counted = (ua, b, a) if ua else (ub, a, b)
    if "port" in (a.slot, b.slot):  # a port meets ports and numbers of two digits or more
        return not unit and all(f.slot == "port" or len(f.value) >= 2 for f in (a, b))
    return (
        not unit
        or unit in MEASURES
        or unit.split("/")[0] in bare.subject
        or bare.subject == counted.subject
    )


_SHOWN = {"time": "schedule"}  # a time of day is reported as a schedule


def _bare(value: str) -> str:
    return value.split(" ", 1)[0].lstrip("v")


def _unit(value: str) -> str:
    return value.split(" ", 1)[1] if " " in value else ""


def change(older: str, newer: str) -> ValueChange | None:
    """The first value ``newer`` gives a subject of ``older`` in place of the older one, or
    None (see the module docstring)."""
    old_read, new_read = _read(older), _read(newer)
    old_facts = [replace_clause(f, i) for i, (c, _) in enumerate(old_read) for f in c]
    new_facts = [replace_clause(f, i) for i, (c, _) in enumerate(new_read) for f in c]
    found = _typed(old_facts, new_facts)
    if found is not None:
        return found
    return _aligned(old_read, new_read)


def _typed(old_facts: list[Fact], new_facts: list[Fact]) -> ValueChange | None:
    said_old = [f for f in old_facts if not f.old]
    said_new = [f for f in new_facts if not f.old]
    for n in said_new:
        for o in said_old:
            if not (_comparable(o, n) and same_subject(o.subject, n.subject)) or _equal(o, n):
                continue
            if _agrees(said_new, o) or _agrees(said_old, n):
                continue  # one side gives both values for that subject
            if _second_difference(old_facts, new_facts, o, n):
                continue
            return _explain(o, n, new_facts)
    return None


def _agrees(facts: list[Fact], fact: Fact) -> bool:
    return any(
        _comparable(f, fact) and same_subject(f.subject, fact.subject) and _equal(f, fact)
        for f in facts
    )


def _second_difference(old: list[Fact], new: list[Fact], o: Fact, n: Fact) -> bool:
    """Whether a second value differs too in the same two clauses (two records: "on 2026-05-03
    the database was 120 GB" and "on 2026-09-01 ... 180 GB", "service 17 ... port 8017" and
    "service 18 ... port 8018"); old values count."""
    return any(
        a is not o and b is not n and _comparable(a, b) and not _equal(a, b)
        for a in old
        if a.clause == o.clause
        for b in new
        if b.clause == n.clause
    )


def _explain(o: Fact, n: Fact, new_facts: list[Fact]) -> ValueChange:
    marked = [f for f in new_facts if f.old and _bare(f.value) == _bare(o.value)]
    how = f"after {n.why!r}" if n.why else "as a plain statement"
    why = (
        f"the older statement gives {o.span!r} for {{{', '.join(sorted(o.subject))}}}; "
        f"the newer gives {n.span!r} for the same subject ({how})"
    )
    if marked:
        why += f" and names {marked[0].span!r} as the old value ({marked[0].why})"
    slot = n.slot if n.slot == o.slot else ("port" if "port" in (o.slot, n.slot) else n.slot)
    return ValueChange(
        slot=_SHOWN.get(slot, slot),
        subject=tuple(sorted(o.subject & n.subject)),
        old=o.value,
        new=n.value,
        old_span=o.span,
        new_span=n.span,
        why=why,
    )


Reading = tuple[tuple[tuple[Fact, ...], _Clause], ...]


def _aligned(old: Reading, new: Reading) -> ValueChange | None:
    """Two otherwise aligned clauses that differ by one short span, the newer saying it changed
    (or both copular). Clauses with typed values are the typed check's business ("pinned to
    Python 3.9" and "owned by Joanna" are two facts, not one changed)."""
    for old_facts, co in old:
        if co.negated or co.additive:
            continue
        for new_facts, cn in new:
            if cn.negated or cn.additive or not (cn.cue or min(co.copular, cn.copular) >= 0):
                continue
            if old_facts or new_facts:
                continue  # a clause with a typed value is the typed check's to judge
            found = _one_span(co, cn, [c for _, c in new])
            if found is not None:
                return found
    return None


def _one_span(co: _Clause, cn: _Clause, new: list[_Clause]) -> ValueChange | None:
    newer = [w for w in cn.words if w not in cn.old_words]
    shared = set(co.words) & set(newer)
    old_only = [i for i, w in enumerate(co.words) if w not in newer]
    new_only = [i for i, w in enumerate(cn.words) if w not in co.words and w not in cn.old_words]
    if not shared or not (1 <= len(old_only) <= 3 and 1 <= len(new_only) <= 3):
        return None
    if len(shared) < max(len(old_only), len(new_only)):
        return None  # more differs than is shared: two statements, not one changed
    if not (_run(old_only) and _run(new_only)) or 0 in (old_only[0], new_only[0]):
        return None  # one span each, after a word both share (not the subject's modifier)
    if not cn.cue and (old_only[0] != co.copular or new_only[0] != cn.copular):
        return None  # copular: the span that differs is the complement, right after the copula
    gone = {co.words[i] for i in old_only}
    if any(gone & set(c.words) for c in new if c is not cn and not (c.negated or c.additive)):
        return None  # the newer statement still says the old value elsewhere
    old_value = " ".join(co.surface[i] for i in old_only)
    new_value = " ".join(cn.surface[i] for i in new_only)
    gate = f"after {cn.cue!r}" if cn.cue else "both statements are copular ('S is V')"
    return ValueChange(
        slot="value",
        subject=tuple(sorted(shared)),
        old=old_value.lower(),
        new=new_value.lower(),
        old_span=old_value,
        new_span=new_value,
        why=(
            f"the two statements align on {{{', '.join(sorted(shared))}}} and differ only in "
            f"{old_value!r} -> {new_value!r} ({gate})"
        ),
    )


def _run(indices: list[int]) -> bool:
    return indices == list(range(indices[0], indices[0] + len(indices)))
