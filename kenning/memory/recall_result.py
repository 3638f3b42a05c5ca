"""What a recall answers: its hits, the weak candidates kept apart, the verdict, the window and
the notes, and the shape an agent reads (``RecallResult.public``). Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kenning.core.models import RecallHit
from kenning.language import temporal
from kenning.llm.expansion import ExpansionReport
from kenning.memory.confidence import Confidence
from kenning.memory.recall_plan import window_public


@dataclass(frozen=True)
class RecallResult:
    hits: tuple[RecallHit, ...]
    warnings: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = ()
    examined: int = 0
    suppressed: tuple[tuple[str, int], ...] = ()  # (term, how many relevant memories it hid)
    # What a suppression took out of this recall: (key, similarity, terms), above the relevance
    # floor. For a person (the dashboard); never in ``public``, which is what an agent reads.
    hidden: tuple[tuple[str, float, tuple[str, ...]], ...] = ()
    expansion: ExpansionReport | None = None  # None: query expansion is off
    window: temporal.Period | None = None  # the period the query named: its memories were fetched
    window_only: bool = False  # the query named only a period: the results are its memories
    confidence: Confidence | None = None  # None: a result built without a verdict
    # no confident answer: the hits that would have been returned, kept apart (never logged)
    weak: tuple[RecallHit, ...] = ()

    def public(self, *, full: bool = True) -> dict[str, Any]:
        """Warnings first (their own section, never a result slot), then results, then notes."""
        out: dict[str, Any] = {}
        if self.warnings:
            out["warnings"] = list(self.warnings)
        out["results"] = [_shaped(h, full) for h in self.hits]
        if self.weak:
            out["weak_candidates"] = [_shaped(h, full) for h in self.weak]
        if self.confidence is not None:
            out["confidence"] = self.confidence.public()
        if self.suppressed:
            out["suppressed"] = [{"term": t, "hidden": n} for t, n in self.suppressed]
        if self.weak and self.confidence is not None:
            out["results_note"] = _unsure(self.confidence)
        elif not self.hits and self.window_only and self.window is not None:
            span = window_public(self.window, True)
            out["results_note"] = f"no memory is dated {span['from']} to {span['to']}"
        elif not self.hits and self.suppressed:
            hidden = sum(n for _, n in self.suppressed)
            out["results_note"] = (
                f"nothing shown: {hidden} relevant memory hit(s) hidden by suppression "
                f"(see suppressed), none other above the relevance floor"
            )
        elif not self.hits:
            out["results_note"] = "no memory is relevant enough (nothing above the relevance floor)"
        if self.window is not None:
            out["window"] = window_public(self.window, self.window_only)
        if self.notes:
            out["notes"] = list(self.notes)
        if self.expansion is not None:
            out["diagnostics"] = {"expansion": self.expansion.public()}
        return out


WHY_UNSURE = {
    "identifier_missing": "the query names an identifier no memory holds",
    "name_missing": "the query names something no memory mentions",
    "no_overlap": "no memory shares a word with the query and none is close in meaning",
}


def _unsure(verdict: Confidence) -> str:
    why = WHY_UNSURE.get(verdict.reason, "nothing matches closely")
    return (
        f"no confident answer: {why} (best similarity {verdict.best:.2f}, needed "
        f"{verdict.needed or 0.0:.2f}); the nearest memories are in weak_candidates"
    )


def _shaped(hit: RecallHit, full: bool) -> dict[str, Any]:
    out = hit.public(full=full)
    moved = {name: round(value, 3) for name, value in hit.factors.items() if value != 1.0}
    if moved:
        out["factors"] = moved
    return out
