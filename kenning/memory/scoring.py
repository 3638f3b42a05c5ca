"""Recall scoring. Pure functions of plain numbers (docs/recall.md).

score = relevance x visibility x recency x experience x temporal, where relevance is the raw
similarity, lifted by ``lexical`` when the memory contains an exact identifier the query names.
"""

from __future__ import annotations

from dataclasses import dataclass

from kenning.core.models import STATE_WEIGHTS

DAY = 86_400.0


@dataclass(frozen=True)
class RecencyPolicy:
    grace_days: int = 90
    step: float = 0.02
    step_days: int = 30
    floor: float = 0.9


def visibility(state: str, own_weight: float = 1.0) -> float:
    """The state's weight times the memory's own weight (an extracted fact may carry 0.5)."""
    return STATE_WEIGHTS.get(state, 0.0) * own_weight


def recency(created_at: float, now: float, policy: RecencyPolicy) -> float:
    """1.0 inside the grace period, then minus ``step`` per ``step_days``, never below ``floor``."""
    age_days = max(0.0, (now - created_at) / DAY)
    if age_days <= policy.grace_days:
        return 1.0
    steps = (age_days - policy.grace_days) / policy.step_days
    return max(policy.floor, 1.0 - policy.step * steps)


def temporal(event_date: float | None, target: float | None) -> float:
    """1.5 within 7 days of the date a query names, falling linearly to 1.0 at 60 days."""
    if event_date is None or target is None:
        return 1.0
    days = abs(event_date - target) / DAY
    if days <= 7:
        return 1.5
    if days >= 60:
        return 1.0
    return 1.5 - 0.5 * (days - 7) / 53


def temporal_window(event_date: float | None, start: float, end: float) -> float:
    """``temporal`` against a period: distance 0 inside [start, end),
    else days to the nearer edge."""
    if event_date is None:
        return 1.0
    if start <= event_date < end:
        return 1.5
    edge = start if event_date < start else end
    return temporal(event_date, edge)


OUTCOME_BASE: dict[str, float] = {"succeeded": 1.0, "pivoted": 0.7, "abandoned": 0.1}
EFFORT_MULTIPLIER: dict[int, float] = {1: 1.0, 2: 1.1, 3: 1.25, 4: 1.5, 5: 1.8}
EXPERIENCE_CAP = 2.0


def experience_weight(effort: int, outcome: str) -> float:
    """Outcome base x effort multiplier, capped at 2.0; effort amplifies wins, never failures.

    ``succeeded`` and ``pivoted`` (the work got done, by another route) are multiplied; an
    abandonment is a failure and keeps its 0.1 however much effort it cost.
    """
    base = OUTCOME_BASE[outcome]
    if outcome == "abandoned":
        return base
    return min(EXPERIENCE_CAP, base * EFFORT_MULTIPLIER[effort])


def lexical(similarity: float, exact: bool, boost: float) -> float:
    """Relevance of a hit: the raw similarity, lifted toward 1 by ``boost`` when it
    holds an exact identifier.

    relevance = similarity + boost x (1 - similarity) for an exact match, else similarity.
    """
    if not exact:
        return similarity
    return similarity + boost * (1.0 - similarity)


def combine(similarity: float, *factors: float) -> float:
    score = similarity
    for factor in factors:
        score *= factor
    return score
