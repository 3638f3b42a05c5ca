"""What the LLM extras spent, against their caps, and whether they are falling back (docs/llm.md#spend).

Numbers only: tokens and calls today and this month (UTC), and per project,
the caps from settings, and the state of the extras -- ``off`` (no API key), ``falling back`` (a cap
is spent: the heuristic paths answer and say so) or ``on``. Read from the daily usage ledger
(kenning/store/llm.py), one round trip for the month.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kenning.llm import Llm

PROJECT_FIELD = "tokens:project:"
CALLS_FIELD = "calls:project:"
NO_PROJECT = "(no project)"


def report(llm: Llm) -> dict[str, Any]:
    """The spend panel's facts (never the key itself)."""
    now = datetime.fromtimestamp(llm.clock.now(), tz=UTC)
    month = [now.replace(day=d).strftime("%Y-%m-%d") for d in range(1, now.day + 1)]
    ledgers = llm.ledger.days(month)
    today, this_month = ledgers[-1], _summed(ledgers)
    settings = llm.settings
    cap, project_cap = settings.llm_daily_token_cap, settings.llm_project_daily_token_cap
    projects = _projects(today, this_month)
    over = sorted(p for p, row in projects.items() if project_cap and row["today"] >= project_cap)
    return {"day": month[-1], "month": month[-1][:7], "state": _state(llm.available, today, cap, over),
            "today": _totals(today), "this_month": _totals(this_month),
            "caps": {"daily_tokens": cap, "project_daily_tokens": project_cap},
            "cap_used_percent": round(100 * today.get("tokens", 0) / cap, 1) if cap else None,
            "projects": projects, "projects_over_cap": over,
            "extras": {"fact_extraction": settings.llm_extract_facts,
                       "contradiction_verdicts": settings.llm_contradiction_verdicts}}


def _summed(ledgers: list[dict[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for ledger in ledgers:
        for name, value in ledger.items():
            out[name] = out.get(name, 0) + value
    return out


def _totals(ledger: dict[str, int]) -> dict[str, int]:
    return {name: ledger.get(name, 0) for name in ("tokens", "calls", "failures")}


def _projects(today: dict[str, int], month: dict[str, int]) -> dict[str, dict[str, int]]:
    """Tokens and calls per project (calls are counted per project since the dashboard showed them)."""
    names = sorted({n.split(":project:", 1)[1] for n in month if n.startswith((PROJECT_FIELD, CALLS_FIELD))})
    return {name or NO_PROJECT: {"today": today.get(PROJECT_FIELD + name, 0),
                                 "this_month": month.get(PROJECT_FIELD + name, 0),
                                 "calls_today": today.get(CALLS_FIELD + name, 0),
                                 "calls_this_month": month.get(CALLS_FIELD + name, 0)} for name in names}


def _state(available: bool, today: dict[str, int], cap: int, over: list[str]) -> dict[str, str]:
    if not available:
        return {"code": "off", "detail": "off: no API key (KENNING_ANTHROPIC_API_KEY); every extra uses its "
                                         "heuristic path"}
    if today.get("tokens", 0) >= cap:
        return {"code": "falling_back", "detail": "falling back: today's token cap is spent; the heuristic paths "
                                                  "answer until the next UTC day"}
    if over:
        return {"code": "falling_back", "detail": f"falling back for {', '.join(over)}: the project's daily cap "
                                                  "is spent"}
    return {"code": "on", "detail": "on: within today's caps"}
