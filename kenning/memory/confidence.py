"""Whether a recall knows the answer: a verdict from the evidence of its hits. Pure.

A recall is a confident answer when its hits carry evidence beyond "nearest by meaning":

- ``window``: the query asks about a period alone and memories are dated inside it;
- ``hint``: a deprioritised memory's reinstate hint is named (the person's own words);
- ``graveyard``: a hit records an abandoned approach the query names (its warning's memory);
- ``identifier``: the query names an identifier (``ERR-4312``, ``vault-proxy``) and a hit holds it
  verbatim -- the lexical and the vector search agree;
- ``similar``: otherwise a best hit above the weak band (``relevance_floor`` +
  ``weak_match_margin``, 0.32), or one in the band that stands out from the query's neighbourhood --
  its similarity at least ``confident_lead`` above the median of the other rows the query's KNN
  returned (with fewer than ``NEIGHBOURS`` of them there is nothing to compare with, and the floor
  the hits passed decides alone). A flat neighbourhood far above the band is an answer too: "which
  reports does finance get?" is answered by all of them. When the query names an identifier that
  no hit holds, the best must reach ``unmatched_identifier_similarity`` (``identifier_missing``):
  the thing asked about is not in memory, only its neighbours are. A proper name that no memory in
  scope holds asks for ``unknown_name_similarity`` (``name_missing``), and hits none of which holds
  a key term of the query (kenning.language.overlap) for ``no_overlap_similarity`` (``no_overlap``).

A fixed cosine does not separate answerable from unanswerable questions with this model (a hard
paraphrase of a stored fact scores 0.27-0.37, an off-topic question 0.13-0.41); how far the best
stands out from the query's own neighbourhood, and whether the thing named is held, do better.

Anything else is ``weak``: no confident answer, and the hits are handed back apart as weak
candidates so an agent can say it does not know. The thresholds were set on bench/gaps.py's
answerable and unanswerable questions and on the ``tune`` half of bench/data/abstention.jsonl
(docs/benchmarks.md, issue 33).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

NEIGHBOURS = 5  # the fewest other rows a lead is measured against


@dataclass(frozen=True, slots=True)
class Confidence:
    confident: bool
    # window | hint | graveyard | identifier | similar (confident); identifier_missing |
    # name_missing | no_overlap | weak | nothing (not)
    reason: str
    best: float  # the best raw similarity among the hits (0.0 without hits)
    needed: float | None  # the similarity the verdict asked for (None: other evidence decided)
    typical: float | None  # the median similarity of the query's other nearest rows
    coverage: float | None = None  # the most of the query's key terms one hit holds

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
    stranger: bool = False  # the query names a proper name no memory in its scope holds
    coverage: float = 1.0  # the most of the query's key terms one hit holds (language.overlap)


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The similarities a verdict asks for (settings; docs/configuration.md)."""

    weak: float  # the top of the weak band (relevance_floor + weak_match_margin)
    lead: float = 0.05  # confident_lead
    unmatched: float = 0.7  # unmatched_identifier_similarity
    stranger: float = 0.45  # unknown_name_similarity
    unrelated: float = 0.275  # no_overlap_similarity


def judge(evidence: Evidence, limits: Thresholds) -> Confidence:
    """The verdict on one recall's evidence (see the module docstring)."""
    verdict = _verdict(evidence, limits)
    return replace(verdict, coverage=evidence.coverage if evidence.similarities else None)


def _verdict(evidence: Evidence, limits: Thresholds) -> Confidence:
    best = max(evidence.similarities, default=0.0)
    others = sorted(evidence.neighbourhood, reverse=True)[1:]
    typical = statistics.median(others) if len(others) >= NEIGHBOURS else None
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
    against = _against(evidence, limits)
    if against is not None:
        failed, needed = against
        if best < needed:
            return Confidence(False, failed, best, needed, typical)
        if failed != "no_overlap":
            return Confidence(True, "similar", best, needed, typical)
    if typical is None or best >= limits.weak:
        return Confidence(True, "similar", best, None, typical)  # clear of the band, or alone
    needed = typical + limits.lead
    return Confidence(
        best >= needed, "similar" if best >= needed else "weak", best, needed, typical
    )


def _against(evidence: Evidence, limits: Thresholds) -> tuple[str, float] | None:
    """The evidence against the hits, strongest first, and the similarity that outweighs it."""
    if evidence.named:  # an identifier no hit holds (held ones are proofs)
        return "identifier_missing", limits.unmatched
    if evidence.stranger:
        return "name_missing", limits.stranger
    if evidence.coverage == 0.0:
        return "no_overlap", limits.unrelated
    return None
