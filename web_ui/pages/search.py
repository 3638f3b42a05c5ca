"""Search: the real recall pipeline (the agent's ``recall``), with each hit's score components, the
graveyard warnings, and -- for a person only -- what a suppression hid from this recall."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.core.validation import namespaces
from kenning.memory.recall import RecallRequest
from web_ui.forms import login
from web_ui.guard import guard
from web_ui.pages.memories import number
from web_ui.runtime import runtime
from web_ui.views import render

MAX_QUERY = 2_000


@guard("viewer")
async def search(request: Request) -> Response:
    rt = runtime(request)
    params = dict(request.query_params)
    text = params.get("q", "").strip()
    data: dict[str, Any] = {
        "q": text,
        "filters": params,
        "namespaces": namespaces(None),
        "result": None,
    }
    if text:
        wanted = RecallRequest(
            query=text[:MAX_QUERY],
            namespaces=[params["namespace"]] if params.get("namespace") else None,
            projects=[params["project"]] if params.get("project") else None,
            top_k=number(params.get("top_k"), "top_k", 10),
            include_deprioritised=params.get("deprioritised") == "on",
            actor=login(request).actor,
        )
        result = await rt.run(rt.engine.recaller.recall, wanted)
        data["result"] = result.public(full=True)
        data["hidden"] = [
            {"key": key, "similarity": sim, "terms": list(terms)}
            for key, sim, terms in result.hidden
        ]
        data["examined"] = result.examined
    return render(request, "search.html", data)


routes = [Route("/search", search, methods=["GET"])]
