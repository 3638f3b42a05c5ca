"""Experience: how hard a piece of work was, how it ended, and what was abandoned
(docs/lifecycle.md#experience).

``record_experience`` attaches an experience record to a memory (``metadata["experience"]``), sets
its ``experience_weight`` (``kenning.memory.scoring.experience_weight``: effort amplifies wins,
never
failures), puts each abandoned approach into the graveyard and, at effort >=
``auto_suppress_effort``, suppresses the approach's name with the recording memory exempt.
``log_abandoned`` writes a new memory for one abandoned approach and records it the same way.
Recording again on the same memory replaces the record.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from statistics import mean
from typing import Any

from kenning.core import validation
from kenning.core.errors import InvalidInput, NotFound
from kenning.core.models import GLOBAL_PROJECT, Memory, iso
from kenning.language import phrases
from kenning.memory.graveyard import APPROACH_TYPES, Abandoned, Graveyard
from kenning.memory.memories import Draft, Memories
from kenning.memory.scoring import EFFORT_MULTIPLIER, OUTCOME_BASE, experience_weight
from kenning.memory.suppression import Suppressions, hidden_by, term
from kenning.runtime.context import Context
from kenning.store import Op, Patch

__all__ = ["Approach", "Experience", "Report", "experience_weight"]
OUTCOMES: tuple[str, ...] = tuple(OUTCOME_BASE)
ALL_PROJECTS = "~all"  # the registry of every project's experience (not a valid project name)
MAX_ITEMS = 20


@dataclass(frozen=True)
class Approach:
    """An approach that was tried and given up: a library, approach, tool, pattern or service."""

    name: str
    type: str = "approach"
    reason: str = ""


@dataclass(frozen=True)
class Report:
    """What the caller says about a piece of work."""

    effort: int
    outcome: str
    iterations: int = 1
    breakthrough: str | None = None
    gotchas: tuple[str, ...] | list[str] = ()
    abandoned_approaches: tuple[Approach, ...] | list[Approach] = field(default_factory=tuple)


def _checked(report: Report) -> dict[str, Any]:
    """The validated record as plain data (stored in the memory's metadata)."""
    if isinstance(report.effort, bool) or report.effort not in EFFORT_MULTIPLIER:
        raise InvalidInput(
            "effort must be a whole number from 1 to "
            f"{max(EFFORT_MULTIPLIER)}; got {report.effort!r}",
            hint="1 trivial, 2 easy, 3 moderate, 4 hard, 5 very hard",
        )
    if report.outcome not in OUTCOMES:
        raise InvalidInput(
            f"unknown outcome {report.outcome!r}", hint=f"use one of {', '.join(OUTCOMES)}"
        )
    validation.bounded_int("iterations", report.iterations, 1, 10_000)
    if len(report.gotchas) > MAX_ITEMS or len(report.abandoned_approaches) > MAX_ITEMS:
        raise InvalidInput(f"at most {MAX_ITEMS} gotchas and {MAX_ITEMS} abandoned approaches")
    approaches = [_approach(a) for a in report.abandoned_approaches]
    return {
        "effort": report.effort,
        "outcome": report.outcome,
        "iterations": report.iterations,
        "breakthrough": validation.reason(report.breakthrough),
        "gotchas": [g for g in (validation.reason(g) for g in report.gotchas) if g],
        "abandoned_approaches": approaches,
    }


def _approach(a: Approach) -> dict[str, str]:
    """One abandoned approach, validated before anything is written.

    Its name must be a usable whole-word term (``kenning.memory.suppression.term``): the graveyard
    finds it
    by name and a high-effort abandonment suppresses it, so a name made of punctuation or stop words
    only ("!!!", "the") or longer than a phrase is refused up front instead of
    half-way through recording.
    """
    if a.type not in APPROACH_TYPES:
        raise InvalidInput(
            f"unknown approach type {a.type!r}", hint=f"use one of {', '.join(APPROACH_TYPES)}"
        )
    # term() refuses empty and over-long names
    name = a.name.strip() if isinstance(a.name, str) else ""
    try:
        term(name)
    except InvalidInput:
        raise InvalidInput(
            f"approach name {a.name!r} is not usable",
            hint=(
                f"name it in 1-{phrases.MAX_PHRASE_TOKENS} words that are not only stop words, "
                "e.g. 'celery' or 'pgbouncer transaction mode'"
            ),
        ) from None
    return {"name": name, "type": a.type, "reason": validation.reason(a.reason) or ""}


@dataclass(frozen=True, slots=True)
class Recorded:
    """An experience record attached (``record_experience``): the weight, the record (public
    form), the graveyard names it added, and what the auto-suppressions of its abandoned
    approaches hide. ``status`` is the remember outcome of the memory ``log_abandoned`` wrote
    (None for ``record_experience``)."""

    key: str
    experience_weight: float
    experience: dict[str, Any]
    graveyard: list[str]
    suppressed: list[str]
    suppression: list[dict[str, Any]]  # term, projects, would_hide, sample
    status: str | None = None

    def public(self) -> dict[str, Any]:
        out = {
            "key": self.key,
            "experience_weight": self.experience_weight,
            "experience": self.experience,
            "graveyard": self.graveyard,
            "suppressed": self.suppressed,
            "suppression": self.suppression,
        }
        return out if self.status is None else {**out, "status": self.status}


@dataclass(frozen=True, slots=True)
class ExperienceOf:
    """One memory's experience record (public form: ISO time) and weight (``get_experience``)."""

    key: str
    experience_weight: float
    experience: dict[str, Any] | None

    def public(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "experience_weight": self.experience_weight,
            "experience": self.experience,
        }


@dataclass(frozen=True, slots=True)
class ExperienceSummary:
    """``experience_summary``: counts over every non-archived record; the lists
    quote no suppressed memory."""

    project: str
    recorded: int
    average_effort: float | None
    outcomes: dict[str, int]
    most_effortful: list[dict[str, Any]]  # key, effort, outcome, content
    graveyard: list[dict[str, Any]]  # Abandoned.public()
    top_breakthroughs: list[dict[str, Any]]  # key, effort, breakthrough

    def public(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "recorded": self.recorded,
            "average_effort": self.average_effort,
            "outcomes": self.outcomes,
            "most_effortful": self.most_effortful,
            "graveyard": self.graveyard,
            "top_breakthroughs": self.top_breakthroughs,
        }


class Experience:
    def __init__(
        self, ctx: Context, memories: Memories, graveyard: Graveyard, suppressions: Suppressions
    ) -> None:
        self.ctx = ctx
        self.memories = memories
        self.graveyard = graveyard
        self.suppressions = suppressions
        self.registry = ctx.store.experience

    def record_experience(self, key: str, report: Report, *, actor: str) -> Recorded:
        """Attach (or replace) the experience record of memory ``key``; returns
        the record and its weight."""
        memory = self.memories.get(key)
        record = _checked(report)
        now = self.ctx.clock.now()
        weight = experience_weight(report.effort, report.outcome)
        record.update(recorded_at=now, actor=actor or "unknown", weight=weight)
        previous = memory.metadata.get("experience") or {}
        metadata = {**memory.metadata, "experience": record}
        event = self.ctx.event(
            actor,
            "record_experience",
            key,
            reason=record["breakthrough"] or "",
            before=memory.content,
            after=memory.content,
            details={"experience": record},
        )
        derived = (
            *self.graveyard.removing(
                key, [a["name"] for a in previous.get("abandoned_approaches", [])]
            ),
            *self._entries(memory, record, now),
        )  # the registry and graveyard, in the patch's unit
        if not self.ctx.store.memories.patch(
            Patch(
                key,
                set={
                    "experience_weight": repr(weight),
                    "updated_at": repr(now),
                    "metadata": _json(metadata),
                },
                also=derived,
            ),
            [event],
        ):
            raise NotFound(
                f"{key} was deleted while its experience was being recorded",
                hint="nothing was recorded",
            )
        hiding = self._bury(key, memory.project, record, actor=actor)
        return Recorded(
            key,
            weight,
            _public(record),
            [a["name"] for a in record["abandoned_approaches"]],
            [h["term"] for h in hiding],
            hiding,
        )

    def _bury(
        self, key: str, project: str, record: dict[str, Any], *, actor: str
    ) -> list[dict[str, Any]]:
        """Auto-suppression of the abandoned approaches' names at high effort (their graveyard
        entries are written with the record).

        Returns what each suppression hides (term, projects, how many
        memories, a sample of them)."""
        suppressed: list[dict[str, Any]] = []
        for a in record["abandoned_approaches"]:
            if record["effort"] >= self.ctx.settings.auto_suppress_effort:
                head, tail = f"abandoned at effort {record['effort']}: ", f" (recorded in {key})"
                # the approach's reason may use the whole MAX_REASON: cut it so suppress() never
                # refuses the composed reason half-way through recording
                why = (
                    head
                    + (a["reason"] or "see memory")[: validation.MAX_REASON - len(head) - len(tail)]
                    + tail
                )
                # in the abandonment's project only, unless it was recorded as global
                scope = () if project == GLOBAL_PROJECT else (project,)
                result = self.suppressions.suppress(
                    a["name"],
                    why,
                    actor=actor,
                    exempt=(key,),
                    source_key=key,
                    auto=True,
                    projects=scope,
                )
                suppressed.append(
                    {
                        "term": result.term,
                        "projects": result.projects,
                        "would_hide": result.would_hide,
                        "sample": result.sample,
                    }
                )
        return suppressed

    def reindex(self, memory: Memory) -> None:
        """Re-create the derived entries (graveyard, per-project registry) of a memory written
        directly, e.g. by a restore. Idempotent; a memory without an
        experience record is left alone."""
        record = memory.metadata.get("experience")
        if not record:
            return
        at = float(record.get("recorded_at") or memory.updated_at)
        for project in (memory.project, ALL_PROJECTS):
            self.registry.add(project, memory.key, at)
        for a in record.get("abandoned_approaches", []):
            self.graveyard.add(
                Abandoned(
                    name=a["name"],
                    type=a["type"],
                    reason=a["reason"],
                    effort=record["effort"],
                    key=memory.key,
                    project=memory.project,
                    at=at,
                )
            )

    def _entries(self, memory: Memory, record: dict[str, Any], at: float) -> list[Op]:
        """The per-project registry and graveyard writes derived from an experience ``record``."""
        ops = [
            op
            for project in (memory.project, ALL_PROJECTS)
            for op in self.registry.adding(project, memory.key, at)
        ]
        for a in record.get("abandoned_approaches", []):
            ops += self.graveyard.adding(
                Abandoned(
                    name=a["name"],
                    type=a["type"],
                    reason=a["reason"],
                    effort=record["effort"],
                    key=memory.key,
                    project=memory.project,
                    at=at,
                )
            )
        return ops

    def log_abandoned(
        self,
        approach: Approach,
        *,
        effort: int,
        project: str | None,
        actor: str,
        context: str | None = None,
        namespace: str = "episodic",
    ) -> Recorded:
        """Write a memory saying ``approach`` was abandoned and why, and
        record it as an abandonment.

        The report is validated before the memory is written, so bad input stores nothing.
        """
        validation.reason(approach.reason, required=True)  # the why is the point of the record
        report = Report(effort=effort, outcome="abandoned", abandoned_approaches=(approach,))
        _checked(report)
        text = f"Abandoned {approach.type} '{approach.name.strip()}': {approach.reason.strip()}"
        if context:
            text += f"\n{context.strip()}"
        written = self.memories.remember(
            Draft(
                text, namespace=namespace, project=project, kind="experience", tags=("abandoned",)
            ),
            actor=actor,
        )
        return replace(
            self.record_experience(written.key, report, actor=actor), status=written.status
        )

    def warn_if_abandoned(self, text: str) -> list[Abandoned]:
        """Graveyard warnings for a query or plan (most effortful first)."""
        phrases.query_text(text)
        return self.graveyard.warn(text)

    def get_experience(self, key: str) -> ExperienceOf:
        memory = self.memories.get(key)
        record = memory.metadata.get("experience")
        return ExperienceOf(key, memory.experience_weight, _public(record) if record else None)

    def experience_summary(
        self, project: str | None = None, *, limit: int = 500
    ) -> ExperienceSummary:
        """Average effort, outcomes, most effortful work, the graveyard and top breakthroughs.

        Counts cover every non-archived record; the lists that quote a memory leave out memories a
        suppression hides (this summary is read by agents).
        """
        scope = validation.project(project) if project else ALL_PROJECTS
        records = self._records(scope, limit)
        outcomes = {o: sum(1 for _, r in records if r["outcome"] == o) for o in OUTCOMES}
        suppressed = self.suppressions.active()
        shown = [(m, r) for m, r in records if not hidden_by(m, suppressed)]
        by_effort = sorted(shown, key=lambda mr: (-mr[1]["effort"], -mr[1]["recorded_at"]))
        wins = [
            mr for mr in by_effort if mr[1]["outcome"] == "succeeded" and mr[1].get("breakthrough")
        ]
        return ExperienceSummary(
            project or "all",
            len(records),
            round(mean(r["effort"] for _, r in records), 2) if records else None,
            outcomes,
            [
                {
                    "key": m.key,
                    "effort": r["effort"],
                    "outcome": r["outcome"],
                    "content": m.content[:200],
                }
                for m, r in by_effort[:5]
            ],
            [a.public() for a in self.graveyard.all(None if scope == ALL_PROJECTS else scope)],
            [
                {"key": m.key, "effort": r["effort"], "breakthrough": r["breakthrough"]}
                for m, r in wins[:5]
            ],
        )

    def _records(self, scope: str, limit: int) -> list[tuple[Memory, dict[str, Any]]]:
        out = []
        for key in self.registry.keys(scope, limit):
            memory = self.ctx.store.memories.read(key)
            record = memory.metadata.get("experience") if memory else None
            if memory is None or record is None:
                self.registry.remove(scope, key)  # forgotten elsewhere: clean up lazily
            elif memory.state != "archived":
                out.append((memory, record))
        return out


def _public(record: dict[str, Any]) -> dict[str, Any]:
    return {**record, "recorded_at": iso(record.get("recorded_at"))}


def _json(value: dict[str, Any]) -> str:
    return json.dumps(value, sort_keys=True)
