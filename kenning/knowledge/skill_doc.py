"""SKILL.md documents: clustering lessons into rules, rendering, parsing and diffing. Pure: no I/O.

A skill is YAML front matter (``name``, ``description``, ``compiled_at``) and a body of sections
(Do, Watch out, Don't, Reference) whose bullets each end with the citations of their sources::

    - Run migrations in a transaction. [episodic:01J8Z3...]

A citation is a memory key without the installation's key prefix (``namespace:ULID``), so a skill
exported from one installation names the same memories in another. Rendering is byte-stable: the
same rules give the same bytes except for the ``compiled_at`` line, which ``canonical`` drops before
anything is hashed or diffed.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import yaml

from kenning.core.errors import InvalidInput
from kenning.core.schema import NAMESPACES
from kenning.language import phrases

SECTIONS: tuple[str, ...] = ("do", "watch", "dont", "reference")
HEADINGS: dict[str, str] = {
    "do": "Do",
    "watch": "Watch out",
    "dont": "Don't",
    "reference": "Reference",
}
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")
NAME_RULE = (
    "1-64 characters: a-z, 0-9 and '-', starting with a letter or digit "
    "(e.g. 'postgres-migrations')"
)
MAX_BYTES = 40_000  # under the content limit, so a skill always fits one memory
MAX_DESCRIPTION = 1_024
MAX_RULE = 500
COMPILED_AT = "compiled_at:"
_CITE = r"[a-z]+:[0-9A-HJKMNP-TV-Z]{26}"
_BULLET = re.compile(rf"^- (?P<text>.+?) \[(?P<cites>{_CITE}(?:, {_CITE})*)\]$")
_NAMESPACES = frozenset(NAMESPACES)


@dataclass(frozen=True)
class Lesson:
    """One lesson from one memory: a breakthrough, a gotcha or an abandoned approach."""

    section: str
    text: str
    source: str  # the citation of the memory that holds it
    vector: np.ndarray[Any, Any] = field(compare=False, repr=False)
    identity: str = ""  # lessons with the same identity are one rule whatever their vectors say

    def key(self) -> str:
        return self.identity or phrases.normalise(self.text)


@dataclass(frozen=True)
class Rule:
    section: str
    text: str
    sources: tuple[str, ...]
    blessed: bool = False

    @property
    def reinforcement(self) -> int:
        """How many distinct memories back this rule."""
        return len(self.sources)

    def line(self) -> str:
        return f"- {self.text} [{', '.join(self.sources)}]"

    def public(self) -> dict[str, Any]:
        return {
            "section": HEADINGS[self.section],
            "rule": self.text,
            "sources": list(self.sources),
            "reinforcement": self.reinforcement,
            "blessed": self.blessed,
        }


@dataclass(frozen=True)
class Change:
    """A rule that a new version adds or removes, with how much a reviewer should look at it."""

    change: str  # "added" | "removed"
    rule: Rule
    risk: str  # "high" | "medium" | "low"

    def public(self) -> dict[str, Any]:
        return {
            "change": self.change,
            "risk": self.risk,
            "section": HEADINGS[self.rule.section],
            "rule": self.rule.text,
        }


@dataclass(frozen=True)
class Document:
    """A parsed SKILL.md: its front matter and its rules."""

    name: str
    description: str
    rules: tuple[Rule, ...]
    text: str

    @property
    def sha(self) -> str:
        return sha(self.text)

    def citations(self) -> set[str]:
        return {s for r in self.rules for s in r.sources}


def one_line(text: str, limit: int = MAX_RULE) -> str:
    """A lesson as a single bullet line: whitespace collapsed, cut at ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def cite(key: str, prefix: str) -> str:
    """A memory key without the installation's prefix:
    ``{prefix}mem:episodic:01J..`` -> ``episodic:01J..``."""
    return key[len(f"{prefix}mem:") :]


def key_of(citation: str, prefix: str) -> str:
    return f"{prefix}mem:{citation}"


def cluster(
    lessons: Iterable[Lesson], threshold: float, blessed: frozenset[str] = frozenset()
) -> list[Rule]:
    """Lessons of one section joined into rules: same identity, or else stored vectors at least
    ``threshold`` alike (cosine) and from a memory the rule does not cite yet. The rule keeps its
    oldest lesson's text (citations are ULIDs, so sorting them is sorting by age); every member is
    cited. One matrix product per lesson, so a domain of thousands of lessons stays cheap."""
    rules: list[Rule] = []
    ordered_lessons = sorted(lessons, key=lambda x: (x.section, x.source, x.text))
    for section in dict.fromkeys(x.section for x in ordered_lessons):
        groups = _Groups()
        for lesson in (x for x in ordered_lessons if x.section == section):
            groups.place(lesson, threshold)
        for seed, sources in zip(groups.seeds, groups.sources, strict=True):
            cited = tuple(sorted(sources))
            rules.append(Rule(section, seed.text, cited, blessed=bool(blessed & sources)))
    return rules


class _Groups:
    """The rules of one section as they form: each group's first lesson, sources and identities."""

    def __init__(self) -> None:
        self.seeds: list[Lesson] = []
        self.sources: list[set[str]] = []
        self.by_key: dict[str, int] = {}
        self.unit = np.zeros((0, 0), dtype=np.float32)  # the seeds' vectors, normalised, as rows

    def place(self, lesson: Lesson, threshold: float) -> None:
        key = lesson.key()
        home = self.by_key.get(key)
        vector = _unit(lesson.vector)
        if home is None and self.seeds:
            similar = np.flatnonzero(self.unit[: len(self.seeds)] @ vector >= threshold)
            # two lessons of one memory share its vector: that is no evidence they agree
            home = next((int(i) for i in similar if lesson.source not in self.sources[i]), None)
        if home is None:
            home = len(self.seeds)
            self.seeds.append(lesson)
            self.sources.append(set())
            self._add_row(vector)
        self.sources[home].add(lesson.source)
        self.by_key.setdefault(key, home)

    def _add_row(self, vector: np.ndarray[Any, Any]) -> None:
        row = len(self.seeds) - 1
        if row >= len(self.unit):  # grow by doubling: no copy of the whole matrix per new rule
            grown = np.zeros((max(16, 2 * len(self.unit)), len(vector)), dtype=np.float32)
            if len(self.unit):
                grown[: len(self.unit)] = self.unit
            self.unit = grown
        self.unit[row] = vector


def _unit(vector: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    norm = float(np.linalg.norm(vector))
    return np.asarray(vector, dtype=np.float32) / norm if norm else np.zeros_like(vector)


def gate(rules: Sequence[Rule], min_sources: int) -> tuple[list[Rule], list[Rule]]:
    """(kept, held back): a rule is kept when enough distinct memories back
    it or a person blessed one."""
    kept = [
        r for r in rules if r.blessed or r.reinforcement >= min_sources or r.section == "reference"
    ]
    return kept, [r for r in rules if r not in kept]


def ordered(rules: Iterable[Rule]) -> list[Rule]:
    """Section order, then most reinforced first, then by text: the order
    is a function of the rules."""
    return sorted(
        rules, key=lambda r: (SECTIONS.index(r.section), -r.reinforcement, r.text, r.sources)
    )


def describe(name: str, rules: Sequence[Rule]) -> str:
    counts = {s: sum(1 for r in rules if r.section == s) for s in SECTIONS}
    return (
        f"Reviewed lessons about {name} from past work ({counts['do']} do, {counts['watch']} "
        f"watch out, {counts['dont']} don't, {counts['reference']} reference); "
        f"use when working on {name}."
    )


def render(name: str, rules: Sequence[Rule], compiled_at: str) -> str:
    """The SKILL.md text. Same rules, same bytes, apart from the compiled_at line."""
    lines = [
        "---",
        f"name: {name}",
        f"description: {json.dumps(describe(name, rules))}",
        f"{COMPILED_AT} {compiled_at}",
        "---",
        "",
        f"# {name}",
    ]
    for section in SECTIONS:
        chosen = [r for r in ordered(rules) if r.section == section]
        if chosen:
            lines += ["", f"## {HEADINGS[section]}", "", *(r.line() for r in chosen)]
    return "\n".join(lines) + "\n"


def canonical(text: str) -> str:
    """The text without its compiled_at line: what is hashed, diffed and compared."""
    return "".join(
        line for line in text.splitlines(keepends=True) if not line.startswith(COMPILED_AT)
    )


def sha(text: str) -> str:
    return hashlib.sha256(canonical(text).encode("utf-8")).hexdigest()


def diff(old: str, new: str, name: str) -> str:
    """A unified diff of the canonical texts ('' when nothing changed)."""
    return "".join(
        difflib.unified_diff(
            canonical(old).splitlines(keepends=True),
            canonical(new).splitlines(keepends=True),
            fromfile=f"{name}/SKILL.md (current)",
            tofile=f"{name}/SKILL.md (proposed)",
        )
    )


def changes(old: Sequence[Rule], new: Sequence[Rule]) -> list[Change]:
    """Rules added and removed (by section and text; new citations alone are no change), labelled
    by risk: a new Don't or a removed Do is high, a removed Watch out or
    Don't medium, the rest low."""
    before = {(r.section, r.text): r for r in old}
    after = {(r.section, r.text): r for r in new}
    out = [
        Change("added", r, "high" if r.section == "dont" else "low")
        for k, r in after.items()
        if k not in before
    ]
    out += [
        Change("removed", r, _removal_risk(r.section)) for k, r in before.items() if k not in after
    ]
    return sorted(
        out,
        key=lambda c: (
            ("high", "medium", "low").index(c.risk),
            c.change,
            SECTIONS.index(c.rule.section),
            c.rule.text,
        ),
    )


def _removal_risk(section: str) -> str:
    return {"do": "high", "watch": "medium", "dont": "medium"}.get(section, "low")


def parse(text: str) -> Document:
    """Read and validate a SKILL.md: size, front matter, sections, and a
    citation on every bullet."""
    if len(text.encode("utf-8")) > MAX_BYTES:
        raise InvalidInput(
            f"the skill is {len(text.encode('utf-8')):,} bytes; the limit is {MAX_BYTES:,}",
            hint="split it into narrower skills",
        )
    head, body = _front_matter(text)
    name, description = head.get("name"), head.get("description")
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise InvalidInput(f"front matter name {name!r} is not allowed", hint=NAME_RULE)
    if (
        not isinstance(description, str)
        or not description.strip()
        or len(description) > MAX_DESCRIPTION
    ):
        raise InvalidInput(
            "front matter needs a description of 1-1,024 characters",
            hint="say what the skill is for and when to use it",
        )
    return Document(name, description.strip(), tuple(_rules(body)), text)


def _front_matter(text: str) -> tuple[dict[str, Any], str]:
    if not text.startswith("---\n"):
        raise InvalidInput(
            "no YAML front matter", hint="start the file with a '---' line, name and description"
        )
    end = text.find("\n---\n", 3)
    if end < 0:
        raise InvalidInput("the front matter is not closed", hint="end it with a '---' line")
    try:
        head = yaml.safe_load(text[4:end])
    except yaml.YAMLError as exc:
        raise InvalidInput(f"the front matter is not valid YAML: {exc}".splitlines()[0]) from None
    if not isinstance(head, dict):
        raise InvalidInput("the front matter must be a mapping", hint="name: ..., description: ...")
    return head, text[end + 5 :]


def _rules(body: str) -> list[Rule]:
    by_heading = {f"## {h}": s for s, h in HEADINGS.items()}
    section: str | None = None
    rules: list[Rule] = []
    for number, line in enumerate(body.splitlines(), start=1):
        if line.startswith("## "):
            section = by_heading.get(line.rstrip())
            if section is None:
                raise InvalidInput(
                    f"unknown section {line.strip()!r}", hint=f"use {', '.join(HEADINGS.values())}"
                )
        elif line.startswith("- "):
            rules.append(_bullet(line, section, number))
    return rules


def _bullet(line: str, section: str | None, number: int) -> Rule:
    if section is None:
        raise InvalidInput(
            f"body line {number}: a bullet outside a section", hint="put it under a ## heading"
        )
    found = _BULLET.match(line.rstrip())
    if found is None:
        raise InvalidInput(
            f"body line {number}: the bullet cites no source",
            hint="end every bullet with [namespace:ULID, ...] naming the memories behind it",
        )
    sources = tuple(found["cites"].split(", "))
    bad = [s for s in sources if s.partition(":")[0] not in _NAMESPACES]
    if bad:
        raise InvalidInput(
            f"body line {number}: {bad[0]!r} names no namespace",
            hint=f"citations look like episodic:<ULID>; namespaces: {', '.join(NAMESPACES)}",
        )
    return Rule(section, found["text"], sources)
