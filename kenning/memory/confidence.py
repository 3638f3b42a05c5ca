"""Whether a recall knows the answer: a verdict from the evidence of its hits. Pure.

A recall is a confident answer when its hits carry evidence beyond "nearest by meaning":

- ``window``: the query asks about a period alone and memories are dated inside it;
- ``hint``: a deprioritised memory's reinstate hint is named (the person's own words);
- ``graveyard``: a hit records an abandoned approach the query names (its warning's memory);
- ``identifier``: the query names an identifier (``ERR-4312``, ``vault-proxy``) and a hit holds it
  verbatim -- the lexical and the vector search agree;
- ``similar``: otherwise the best raw similarity reaches ``confident_similarity``; when the query
  names an identifier that no hit holds, it must reach ``unmatched_identifier_similarity``
  (``identifier_missing``): the thing asked about is not in memory, only its neighbours are.

Anything else is ``weak``: no confident answer, and the hits are handed back apart as weak
candidates so an agent can say it does not know. The thresholds were set on bench/gaps.py's
answerable and unanswerable questions (docs/benchmarks.md, issue 33).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Confidence:
    confident: bool
    # window | hint | graveyard | identifier | similar | identifier_missing | weak | nothing
    reason: str
    best: float  # the best raw similarity among the hits (0.0 without hits)
    needed: float | None  # the similarity the verdict asked for (None: other evidence decided)
    typical: float | None  # the median similarity of the query's nearest rows (its neighbourhood)

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "confident": self.confident,
            "reason": self.reason,
            "best_similarity": round(self.best, 4),
        }
        if self.needed is not None:
            out["needed"] = round(self.needed, 4)
        if self.typical is not None:
            out["typical_similarity"] = round(self.typical, 4)
        return out


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a recall found, as plain numbers and flags."""

    similarities: Sequence[float]  # raw similarity of each hit
    neighbourhood: Sequence[float] = ()  # raw similarity of every row the query's KNN returned
    named: bool = False  # the query names an identifier
    held: bool = False  # a hit holds one of them verbatim
    window: bool = False  # the query asks about a period alone
    hinted: bool = False  # a reinstate candidate's hint is named
    warned: bool = False  # a hit records an abandoned approach the query names (a warning)


def judge(evidence: Evidence, *, similar: float, unmatched: float) -> Confidence:
    """The verdict on one recall's evidence (see the module docstring)."""
    best = max(evidence.similarities, default=0.0)
    typical = statistics.median(evidence.neighbourhood) if evidence.neighbourhood else None
    if not evidence.similarities:
        return Confidence(False, "nothing", 0.0, None, typical)
    proofs = (
        ("window", evidence.window),
        ("hint", evidence.hinted),
        ("graveyard", evidence.warned),
        ("identifier", evidence.named and evidence.held),
    )
    reason = next((name for name, holds in proofs if holds), None)
    if reason is not None:
        return Confidence(True, reason, best, None, typical)
    needed = unmatched if evidence.named else similar
    if best >= needed:
        return Confidence(True, "similar", best, needed, typical)
    return Confidence(
        False, "identifier_missing" if evidence.named else "weak", best, needed, typical
    )
