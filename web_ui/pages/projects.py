"""Projects: every project that has a context (most recently updated first), and one project's
context with its memory counts per namespace -- the engine calls behind
list_projects and get_project_context."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from web_ui.guard import guard
from web_ui.pages.memories import number
from web_ui.runtime import runtime
from web_ui.views import render

PAGE_SIZE = 50


@guard("viewer")
async def projects(request: Request) -> Response:
    rt = runtime(request)
    name = request.query_params.get("name", "").strip()
    data: dict[str, Any] = {"detail": None}
    if name:
        data["detail"] = (await rt.run(rt.engine.projects.describe, name)).public()
    offset = number(request.query_params.get("offset"), "offset", 0)
    contexts, total = await rt.run(rt.engine.projects.all, offset=offset, limit=PAGE_SIZE)
    data.update(
        projects=[c.public() for c in contexts], total=total, offset=offset, page_size=PAGE_SIZE
    )
    return render(request, "projects.html", data)


routes = [Route("/projects", projects, methods=["GET"])]
