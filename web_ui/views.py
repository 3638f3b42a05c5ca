"""One data dict per page, rendered as HTML (Jinja2) or as JSON (``?format=json`` or an
``Accept: application/json`` request), so the page and its API always show the same facts."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response

from web_ui.sessions import Login

TEMPLATES = Path(__file__).with_name("templates")
NAV: tuple[tuple[str, str, str], ...] = (  # (path, label, role needed to see it)
    ("/", "Overview", "viewer"),
    ("/memories", "Memories", "viewer"),
    ("/search", "Search", "viewer"),
    ("/contradictions", "Contradictions", "viewer"),
    ("/duplicates", "Duplicates", "viewer"),
    ("/suppressions", "Suppressions", "viewer"),
    ("/experience", "Experience", "viewer"),
    ("/projects", "Projects", "viewer"),
    ("/skills", "Skills", "viewer"),
    ("/feeds", "Feeds", "viewer"),
    ("/queue", "Queue", "viewer"),
    ("/telemetry", "Telemetry", "viewer"),
    ("/audit", "Audit log", "viewer"),
    ("/backups", "Backups", "admin"),
    ("/settings", "Settings", "admin"),
    ("/accounts", "Accounts", "admin"),
    ("/connections", "Connections", "admin"),
)


def wants_json(request: Request) -> bool:
    return request.query_params.get("format") == "json" or request.headers.get(
        "accept", ""
    ).startswith("application/json")


def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(TEMPLATES),
        autoescape=select_autoescape(["html"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = when
    env.filters["pretty"] = lambda value: json.dumps(value, indent=2, sort_keys=True, default=str)
    env.globals["query"] = lambda **params: urlencode(
        {k: v for k, v in params.items() if v not in (None, "")}
    )
    return env


def when(value: Any) -> str:
    """An ISO time or epoch seconds as 'YYYY-MM-DD HH:MM UTC' ('' when unset)."""
    if value in (None, ""):
        return ""
    if isinstance(value, int | float):
        value = datetime.fromtimestamp(value, tz=UTC).isoformat()
    return str(value).replace("T", " ")[:16] + " UTC"


def login_of(request: Request) -> Login | None:
    value = getattr(request.state, "login", None)
    return value if isinstance(value, Login) else None


def render(request: Request, template: str, data: dict[str, Any], *, status: int = 200) -> Response:
    """The page's data as JSON, or through its template (with the login, its
    CSRF token and the menu)."""
    if wants_json(request):
        return JSONResponse(json.loads(json.dumps(data, default=str)), status_code=status)
    login = login_of(request)
    nav = [(path, label) for path, label, role in NAV if login is not None and login.may(role)]
    env: Environment = request.app.state.templates
    html = env.get_template(template).render(
        request=request,
        login=login,
        csrf=login.csrf if login else "",
        nav=nav,
        path=request.url.path,
        **data,
    )
    return HTMLResponse(html, status_code=status)
