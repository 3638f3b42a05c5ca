"""Graveyard and experience (what was tried, how hard, how it ended, what was abandoned and why)
and the recall log's "why did you mention X" -- the same engine calls as the
MCP tools of those names."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from web_ui.guard import guard
from web_ui.runtime import runtime
from web_ui.views import render

MAX_TOPIC = 500
MENTIONS = 20


@guard("viewer")
async def experience(request: Request) -> Response:
    rt = runtime(request)
    project = request.query_params.get("project", "").strip() or None
    topic = request.query_params.get("topic", "").strip()[:MAX_TOPIC]
    data: dict[str, Any] = {"project": project or "", "topic": topic, "why": None}
    data["summary"] = (await rt.run(rt.engine.experience.experience_summary, project)).public()
    if topic:
        data["why"] = (
            await rt.run(rt.engine.recall_log.why_did_you_mention, topic, limit=MENTIONS)
        ).public()
    return render(request, "experience.html", data)


routes = [Route("/experience", experience, methods=["GET"])]
