"""The audit log (filter by actor, action, key and time; pages by cursor) and one memory's history
is on its own page (``/memory``)."""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from web_ui.guard import guard
from web_ui.runtime import runtime
from web_ui.views import render

PAGE = 50


@guard("viewer")
async def audit(request: Request) -> Response:
    rt = runtime(request)
    params = {k: v.strip() for k, v in request.query_params.items()}
    key = params.get("key") or None
    if key:  # one key's events come from its own history list, not by walking the stream
        found = await rt.run(rt.engine.history.history, key)
        events, cursor = list(reversed(found.public()["events"])), None
    else:
        page = await rt.run(
            rt.engine.history.audit_log,
            actor=params.get("actor") or None,
            action=params.get("action") or None,
            since=params.get("since") or None,
            before=params.get("before") or None,
            limit=PAGE,
        )
        events, cursor = page.public()["events"], page.next
    return render(
        request,
        "audit.html",
        {"events": events, "next": cursor, "filters": params, "event": params.get("event", "")},
    )


routes = [Route("/audit", audit, methods=["GET"])]
