"""What the LLM extras spent, against their caps, and whether they are falling
back (docs/llm.md#spend).

Numbers only: tokens and calls today and this month (UTC), and per project, the caps from settings,
and the state of the extras -- ``off`` (no API key), ``falling_back`` (a cap is spent: the heuristic
paths answer and say so) or ``on`` -- with the reason as a code; the doors word it. Read from the
daily usage ledger (kenning/store/llm.py), one round trip for the month.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from kenning.llm.client import Llm

PROJECT_FIELD = "tokens:project:"
CALLS_FIELD = "calls:project:"
NO_PROJECT = "(no project)"
State = Literal["off", "falling_back", "on"]
Reason = Literal["no_key", "daily_cap", "project_cap", "within_caps"]


@dataclass(frozen=True, slots=True)
class Spend:
    """The spend panel's facts; ``public()`` is their plain JSON form (the doors
    add the state's wording)."""

    day: str
    month: str
    state: State
    reason: Reason
    today: dict[str, int]
    this_month: dict[str, int]
    caps: dict[str, int]
    cap_used_percent: float | None
    projects: dict[str, dict[str, int]]
    projects_over_cap: list[str]
    extras: dict[str, bool]

    def public(self) -> dict[str, Any]:
        return asdict(self)


def report(llm: Llm) -> Spend:
    """The spend panel's facts (never the key itself)."""
    now = datetime.fromtimestamp(llm.clock.now(), tz=UTC)
    month = [now.replace(day=d).strftime("%Y-%m-%d") for d in range(1, now.day + 1)]
    ledgers = llm.ledger.days(month)
    today, this_month = ledgers[-1], _summed(ledgers)
    settings = llm.settings
    cap, project_cap = settings.llm_daily_token_cap, settings.llm_project_daily_token_cap
    projects = _projects(today, this_month)
    over = sorted(p for p, row in projects.items() if project_cap and row["today"] >= project_cap)
    state, reason = _state(llm.available, today, cap, over)
    return Spend(
        day=month[-1],
        month=month[-1][:7],
        state=state,
        reason=reason,
        today=_totals(today),
        this_month=_totals(this_month),
        caps={"daily_tokens": cap, "project_daily_tokens": project_cap},
        cap_used_percent=round(100 * today.get("tokens", 0) / cap, 1) if cap else None,
        projects=projects,
        projects_over_cap=over,
        extras={
            "fact_extraction": settings.llm_extract_facts,
            "contradiction_verdicts": settings.llm_contradiction_verdicts,
        },
    )


def _summed(ledgers: list[dict[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for ledger in ledgers:
        for name, value in ledger.items():
            out[name] = out.get(name, 0) + value
    return out


def _totals(ledger: dict[str, int]) -> dict[str, int]:
    return {name: ledger.get(name, 0) for name in ("tokens", "calls", "failures")}


def _projects(today: dict[str, int], month: dict[str, int]) -> dict[str, dict[str, int]]:
    """Tokens and calls per project (calls are counted per project since
    the dashboard showed them)."""
    names = sorted(
        {n.split(":project:", 1)[1] for n in month if n.startswith((PROJECT_FIELD, CALLS_FIELD))}
    )
    return {
        name or NO_PROJECT: {
            "today": today.get(PROJECT_FIELD + name, 0),
            "this_month": month.get(PROJECT_FIELD + name, 0),
            "calls_today": today.get(CALLS_FIELD + name, 0),
            "calls_this_month": month.get(CALLS_FIELD + name, 0),
        }
        for name in names
    }


def _state(
    available: bool, today: dict[str, int], cap: int, over: list[str]
) -> tuple[State, Reason]:
    if not available:
        return "off", "no_key"
    if today.get("tokens", 0) >= cap:
        return "falling_back", "daily_cap"
    if over:
        return "falling_back", "project_cap"
    return "on", "within_caps"
