"""The overview: counts by namespace and state (and a chart of them), memories created per day,
the LLM extras' spend against their caps, open contradictions, the worker and its jobs, and the
latest activity. One worker-thread call gathers it all."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.engine import Engine
from kenning.llm import spend
from kenning.memory.inspection import AuditRequest
from web_ui import charts
from web_ui.guard import guard
from web_ui.runtime import runtime
from web_ui.views import render

RECENT = 10
DAYS = 14


def gather(engine: Engine) -> dict[str, Any]:
    audit = engine.inspection.audit(AuditRequest(limit=1), for_person=True)
    _, open_total = engine.contradictions.listing(status="open", limit=1)
    worker_ok, worker_detail = engine.jobs.health()
    runs = {name: run.to_dict() for name, run in sorted(engine.jobs.last_runs().items())}
    return {
        "counts": audit.counts,
        "total": audit.total,
        "open_contradictions": open_total,
        "worker": {
            "ok": worker_ok,
            "detail": worker_detail,
            "leader": engine.jobs.leader(),
            "runs": runs,
        },
        "recent": engine.history.audit_log(limit=RECENT).public()["events"],
        "chart": charts.stacked(audit.counts),
        "created": created_chart(engine),
        "spend": spend_view(spend.report(engine.llm)),
    }


STATE_WORDING = {
    "no_key": "off: no API key (KENNING_ANTHROPIC_API_KEY); every extra uses its heuristic path",
    "daily_cap": (
        "falling back: today's token cap is spent; the heuristic paths "
        "answer until the next UTC day"
    ),
    "project_cap": "falling back for {over}: the project's daily cap is spent",
    "within_caps": "on: within today's caps",
}


def spend_view(report: spend.Spend) -> dict[str, Any]:
    """The spend panel as the page shows it: the engine's numbers, its state worded for a person."""
    view = report.public()
    detail = STATE_WORDING[view.pop("reason")].format(over=", ".join(report.projects_over_cap))
    view["state"] = {"code": report.state, "detail": detail}
    return view


def created_chart(engine: Engine) -> dict[str, Any]:
    made = engine.activity.memories_created(DAYS)
    return charts.columns(
        made.days,
        made.series,
        title="Memories created per day, by namespace",
        x_label="day (UTC)",
        y_label="memories",
        short=5,
    )


@guard("viewer")
async def overview(request: Request) -> Response:
    rt = runtime(request)
    return render(request, "overview.html", await rt.run(gather, rt.engine))


routes = [Route("/", overview, methods=["GET"])]
