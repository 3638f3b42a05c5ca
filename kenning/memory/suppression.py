"""Suppression: a tombstone on the read path (docs/lifecycle.md#suppression).

A suppressed term hides every memory whose content (or title) contains it as a whole word or phrase
(``kenning.language.phrases``), from recall, briefings and agent-facing lists -- including memories
written later in new wording, because the check runs on every read, not once at suppression time. A
record may exempt memory keys: an abandonment recorded at effort >= 4 suppresses the approach's name
but the memory that explains why the approach died stays findable, and so does every memory that
records leaving it -- that it was replaced, dropped or moved away from, or why (``kenning.language.
departure``): an automatic suppression hides the recommendation, not the history. A record may be
limited to projects (``projects``; empty = everywhere): an abandonment suppresses the name only in
its own project unless it was recorded in ``global``. Suppressing a term again widens the record
(more projects; a suppression for everywhere makes it global).

API for other components (briefing, dashboard):
  ``Suppressions.active()``            -> the current suppressions (one HGETALL)
  ``parse_active(reply)``              -> the same, from the raw reply of a recall's
                                          ``Store.look_up``
  ``hidden_by(memory, active)``        -> the terms hiding a memory ([] when visible); pure
  ``kept_as_history(memory, active)``  -> the automatic ones it names but records leaving; pure
  ``Suppressions.visible(memories)``   -> the memories that may be shown to an agent
  ``Suppressions.list_suppressions()`` -> every suppression with what it hides now
  ``Suppressions.lifting(term)``       -> what lifting one would bring back (nothing is written)
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kenning.core import query, validation
from kenning.core.errors import Conflict, InvalidInput, NotFound
from kenning.core.models import Memory, iso
from kenning.language import departure, phrases
from kenning.runtime.context import Context
from kenning.store import parse_all

MAX_TERM = 200
CANDIDATE_LIMIT = 1_000  # per namespace, when counting what a term hides
SAMPLE = 5
EVERY = CANDIDATE_LIMIT * 10  # more than ``matching`` can find (CANDIDATE_LIMIT a namespace)


@dataclass(frozen=True)
class Suppression:
    """One suppressed term (normalised) and why it was suppressed."""

    term: str
    reason: str
    actor: str
    at: float
    exempt: tuple[str, ...] = ()
    source_key: str | None = None
    auto: bool = False
    hidden_when_created: int = 0
    projects: tuple[str, ...] = ()  # empty: every project

    def record(self) -> dict[str, Any]:
        return {
            "term": self.term,
            "reason": self.reason,
            "actor": self.actor,
            "at": self.at,
            "exempt": list(self.exempt),
            "source_key": self.source_key,
            "auto": self.auto,
            "hidden_when_created": self.hidden_when_created,
            "projects": list(self.projects),
        }

    def covers(self, project: str) -> bool:
        return not self.projects or project in self.projects

    def audit_details(self) -> dict[str, Any]:
        """The audit details of its creation."""
        return {
            "term": self.term,
            "hidden": self.hidden_when_created,
            "auto": self.auto,
            "exempt": list(self.exempt),
            "projects": list(self.projects),
        }

    @classmethod
    def from_record(cls, data: dict[str, Any]) -> Suppression:
        return cls(
            term=data["term"],
            reason=data.get("reason", ""),
            actor=data.get("actor", ""),
            at=float(data.get("at", 0.0)),
            exempt=tuple(data.get("exempt", ())),
            source_key=data.get("source_key"),
            auto=bool(data.get("auto", False)),
            hidden_when_created=int(data.get("hidden_when_created", 0)),
            projects=tuple(data.get("projects", ())),
        )

    def public(self) -> dict[str, Any]:
        out = self.record()
        out["at"] = iso(self.at)
        return out


@dataclass(frozen=True, slots=True)
class Suppressed:
    """``suppress``: its ``status`` (preview, suppressed, already_suppressed) and its impact: how
    many non-archived memories the term hides (``at_least`` when the count is capped) and a
    sample of them. ``reason`` is the first reason of a term that was already
    suppressed (None otherwise)."""

    status: str
    term: str
    would_hide: int
    at_least: bool
    projects: list[str]
    sample: list[dict[str, str]]  # key, content
    reason: str | None = None

    def public(self) -> dict[str, Any]:
        out = {
            "status": self.status,
            "term": self.term,
            "would_hide": self.would_hide,
            "at_least": self.at_least,
            "projects": self.projects,
            "sample": self.sample,
        }
        return out if self.reason is None else {**out, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Unsuppressed:
    """``unsuppress``: the term lifted."""

    term: str

    def public(self) -> dict[str, Any]:
        return {"status": "unsuppressed", "term": self.term}


@dataclass(frozen=True, slots=True)
class InUse:
    """A suppression and how many non-archived memories it hides now (``at_least`` when capped)."""

    suppression: Suppression
    hides: int
    hides_at_least: bool = False  # the count stopped at the search cap

    def public(self) -> dict[str, Any]:
        """The suppression's plain form with its current reach."""
        out = self.suppression.public()
        return {**out, "hides": self.hides, "hides_at_least": self.hides_at_least}


@dataclass(frozen=True, slots=True)
class Lifting:
    """What lifting a suppression would bring back: the non-archived memories it hides now that no
    other suppression hides (``at_least`` when the count is capped), a sample of them, and the
    suppression itself -- ``auto`` when an abandonment made it (``source_key`` names the memory
    that recorded it, which stays findable either way)."""

    suppression: Suppression
    brings_back: int
    at_least: bool
    sample: list[dict[str, str]]  # key, content

    def public(self) -> dict[str, Any]:
        return {
            **self.suppression.public(),
            "brings_back": self.brings_back,
            "at_least": self.at_least,
            "sample": self.sample,
        }


def hidden_by(memory: Memory, active: list[Suppression]) -> list[str]:
    """The suppressed terms that hide ``memory`` (exemptions honoured); [] when it may be shown."""
    if not active:
        return []
    text = _text(memory)
    return [s.term for s in _naming(memory, text, active) if not _history(text, s)]


def kept_as_history(memory: Memory, active: list[Suppression]) -> list[str]:
    """The automatic suppressions whose term ``memory`` names but which it is not hidden by,
    because it records the approach's replacement or why it was dropped; pure."""
    if not active:
        return []
    text = _text(memory)
    return [s.term for s in _naming(memory, text, active) if _history(text, s)]


def _text(memory: Memory) -> str:
    return memory.content if memory.title is None else f"{memory.title}\n{memory.content}"


def _naming(memory: Memory, text: str, active: list[Suppression]) -> list[Suppression]:
    grams = phrases.ngrams(text, longest=max(len(s.term.split()) for s in active))
    return [
        s
        for s in active
        if s.term in grams and memory.key not in s.exempt and s.covers(memory.project)
    ]


def _history(text: str, suppression: Suppression) -> bool:
    return suppression.auto and departure.records_departure(text, suppression.term)


def term(value: str) -> str:
    """Validate and normalise a term; refuse one the full-text index cannot search for."""
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_TERM:
        raise InvalidInput(
            f"a term is 1-{MAX_TERM} characters", hint="name the word or phrase to suppress"
        )
    norm = phrases.normalise(value)
    if not norm or len(norm.split()) > phrases.MAX_PHRASE_TOKENS or not phrases.search_words(value):
        raise InvalidInput(
            f"cannot suppress {value!r}",
            hint=f"use 1-{phrases.MAX_PHRASE_TOKENS} words that are not stop words like 'the'",
        )
    return norm


class Suppressions:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.store = ctx.store.suppressions

    def active(self) -> list[Suppression]:
        return [Suppression.from_record(r) for r in self.store.all().values()]

    @staticmethod
    def parse_active(reply: Any) -> list[Suppression]:
        return [Suppression.from_record(r) for r in parse_all(reply).values()]

    def visible(self, memories: list[Memory]) -> list[Memory]:
        current = self.active()
        return [m for m in memories if not hidden_by(m, current)]

    def suppress(
        self,
        value: str,
        reason: str | None,
        *,
        actor: str,
        preview: bool = False,
        exempt: tuple[str, ...] = (),
        source_key: str | None = None,
        auto: bool = False,
        projects: tuple[str, ...] = (),
    ) -> Suppressed:
        """Suppress a term (or, with ``preview``, only say how many memories it
        would hide, with a sample).

        Suppressing an already suppressed term keeps the first reason, adds any new exemptions and
        widens its projects. ``projects`` limits it (empty: everywhere).
        """
        norm = term(value)
        why = validation.reason(reason, required=True) or ""
        impact = self._impact(norm, exempt, projects)
        if preview:
            return impact
        record = Suppression(
            term=norm,
            reason=why,
            actor=actor or "unknown",
            at=self.ctx.clock.now(),
            exempt=exempt,
            source_key=source_key,
            auto=auto,
            hidden_when_created=impact.would_hide,
            projects=projects,
        )
        created = self.ctx.event(
            actor, "suppress", source_key or "", reason=why, details=record.audit_details()
        )
        # guarded: two writers never both create it
        if not self.store.add(norm, record.record(), [created]):
            existing = self.store.get(norm)
            # unsuppressed between the two calls: never report a suppression that is gone
            if existing is None:
                raise Conflict(
                    f"{norm!r} was unsuppressed while it was being suppressed",
                    hint="call suppress again",
                )
            old = Suppression.from_record(existing)
            self._widen(norm, old, exempt, projects, actor=actor, reason=why, source_key=source_key)
            return replace(impact, status="already_suppressed", reason=old.reason)
        return replace(impact, status="suppressed")

    def _impact(self, norm: str, exempt: tuple[str, ...], projects: tuple[str, ...]) -> Suppressed:
        """How many memories suppressing ``norm`` would hide, with a sample that never quotes a
        memory another suppression already hides."""
        count, sample, capped = self.matching(norm, exempt=exempt, projects=projects)
        current = self.active()
        shown = [
            {"key": m.key, "content": m.content[:200]} for m in sample if not hidden_by(m, current)
        ]
        return Suppressed("preview", norm, count, capped, list(projects), shown)

    def _widen(
        self,
        norm: str,
        old: Suppression,
        exempt: tuple[str, ...],
        projects: tuple[str, ...],
        *,
        actor: str,
        reason: str,
        source_key: str | None,
    ) -> None:
        """A term suppressed again: its record gains the new exemptions and the wider projects
        (stored and audited only when that changes it)."""
        merged = tuple(dict.fromkeys(old.exempt + exempt))
        wider = (
            ()
            if not old.projects or not projects
            else tuple(dict.fromkeys(old.projects + projects))
        )
        if merged == old.exempt and wider == old.projects:
            return
        event = self.ctx.event(
            actor,
            "suppress",
            source_key or "",
            reason=reason,
            details={
                "term": norm,
                "exempt_added": [k for k in merged if k not in old.exempt],
                "projects": list(wider),
            },
        )
        self.store.put(
            norm, {**old.record(), "exempt": list(merged), "projects": list(wider)}, [event]
        )

    def unsuppress(self, value: str, *, actor: str, reason: str | None = None) -> Unsuppressed:
        norm = term(value)
        # before the delete: a refused reason must not leave it unaudited
        why = validation.reason(reason) or ""
        existing = self.store.get(norm)
        event = self.ctx.event(
            actor, "unsuppress", "", reason=why, details={"term": norm, "was": existing}
        )
        # gone or changed meanwhile
        if existing is None or not self.store.delete(norm, existing, [event]):
            raise NotFound(f"{norm!r} is not suppressed", hint="list_suppressions shows what is")
        return Unsuppressed(norm)

    def lifting(self, value: str) -> Lifting:
        """What ``unsuppress(value)`` would bring back, said before it is done (a preview: nothing
        is written). A memory another suppression also hides stays hidden, so it is not counted."""
        norm = term(value)
        existing = self.store.get(norm)
        if existing is None:
            raise NotFound(f"{norm!r} is not suppressed", hint="list_suppressions shows what is")
        held = Suppression.from_record(existing)
        _, found, capped = self.matching(
            norm, exempt=held.exempt, sample=EVERY, projects=held.projects
        )
        others = [s for s in self.active() if s.term != norm]
        back = [m for m in found if not hidden_by(m, others)]
        sample = [{"key": m.key, "content": m.content[:200]} for m in back[:SAMPLE]]
        return Lifting(held, len(back), capped, sample)

    def list_suppressions(self) -> list[InUse]:
        """Every suppression with what it hides now (``hides``), newest first."""
        out = []
        for s in sorted(self.active(), key=lambda s: s.at, reverse=True):
            count, _, capped = self.matching(s.term, exempt=s.exempt, sample=0, projects=s.projects)
            out.append(InUse(s, count, capped))
        return out

    def matching(
        self,
        norm: str,
        *,
        exempt: tuple[str, ...] = (),
        sample: int = SAMPLE,
        projects: tuple[str, ...] = (),
    ) -> tuple[int, list[Memory], bool]:
        """(how many non-archived memories contain the term, a sample of them,
        whether the count is capped).

        The TEXT index finds candidates (all words of the term); each is
        confirmed as a whole-word match.
        """
        words = phrases.search_words(norm)
        clauses = (
            *(query.text_any("content", [w]) for w in words),
            query.not_tag("state", ["archived"]),
            *([query.tag("project", list(projects))] if projects else []),
        )
        count, capped = 0, False
        found: list[Memory] = []
        for namespace in validation.namespaces(None):
            search = query.Search(
                index=self.ctx.index,
                namespaces=(namespace,),
                clauses=clauses,
                limit=CANDIDATE_LIMIT,
                return_fields=("content", "title", "created_at", "project"),
            )
            result = self.ctx.store.memories.search(search)
            capped = capped or result.total > CANDIDATE_LIMIT
            for hit in result.hits:
                if hit.memory.key not in exempt and phrases.contains(
                    f"{hit.memory.title or ''}\n{hit.memory.content}", norm
                ):
                    count += 1
                    if len(found) < sample:
                        found.append(hit.memory)
        return count, found, capped
