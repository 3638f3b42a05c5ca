"""Recall scoring. Pure functions of plain numbers (docs/recall.md).

score = similarity x visibility x recency x experience x temporal
"""

from __future__ import annotations

from dataclasses import dataclass

from kenning.models import STATE_WEIGHTS

DAY = 86_400.0


@dataclass(frozen=True)
class RecencyPolicy:
    grace_days: int = 90
    step: float = 0.05
    step_days: int = 30
    floor: float = 0.3


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


def combine(similarity: float, *factors: float) -> float:
    score = similarity
    for factor in factors:
        score *= factor
    return score
