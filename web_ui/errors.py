"""The one translator from errors to pages: engine errors become an error page with the engine's
message and hint (a form error re-renders its form, see ``web_ui.forms``); an outage says memory
could NOT be checked, never "nothing found"; the details of an outage or a crash go to the log
under a request id the page shows."""

from __future__ import annotations

import logging
import uuid
from typing import Any

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response

from kenning.core.errors import (
    BackendUnavailable,
    Conflict,
    EmbeddingMismatch,
    InvalidInput,
    KenningError,
    NotFound,
    PermissionDenied,
    RateLimited,
)
from web_ui.views import render, wants_json

log = logging.getLogger(__name__)
STATUS: dict[type[KenningError], int] = {
    InvalidInput: 400,
    NotFound: 404,
    Conflict: 409,
    PermissionDenied: 403,
    BackendUnavailable: 503,
    EmbeddingMismatch: 503,
}
OUTAGE = "Memory could NOT be checked"


class Forbidden(KenningError):
    """The request is refused by the door: a missing role, a foreign origin, a bad CSRF token."""

    code = "forbidden"


class LoginRequired(Exception):
    """No live login: a page sends the person to /login, the JSON API answers 401."""


def status_of(exc: KenningError) -> int:
    if isinstance(exc, Forbidden):
        return 403
    if isinstance(exc, RateLimited):
        return 429
    for kind, status in STATUS.items():
        if isinstance(exc, kind):
            return status
    return 400


def described(exc: KenningError) -> dict[str, Any]:
    """What the page says about an engine error; an outage keeps its internals for the log."""
    if isinstance(exc, BackendUnavailable | EmbeddingMismatch):
        request_id = uuid.uuid4().hex[:12]
        log.warning("page failed: %s: %s (request id %s)", exc.code, exc.message, request_id)
        summary = exc.message.split(": ", 1)[0].rstrip(".")
        return {
            "code": exc.code,
            "title": OUTAGE,
            "message": (
                f"{summary}. This is an outage, not an empty result: nothing was shown or changed."
            ),
            "hint": exc.hint or "check `kenning doctor`, then reload",
            "request_id": request_id,
        }
    return {
        "code": exc.code,
        "title": "That did not work" if status_of(exc) < 500 else "Unavailable",
        "message": exc.message,
        "hint": exc.hint,
        "request_id": None,
    }


async def engine_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, KenningError)
    body = described(exc)
    if isinstance(exc, BackendUnavailable | EmbeddingMismatch):
        request.app.state.runtime.metrics.valkey_errors.inc()
    return render(request, "error.html", {"error": body}, status=status_of(exc))


async def login_required(request: Request, exc: Exception) -> Response:
    if wants_json(request):
        return JSONResponse(
            {"error": {"code": "login_required", "message": "log in first"}}, status_code=401
        )
    target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return RedirectResponse(f"/login?next={_quoted(target)}", status_code=303)


async def http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    body = {
        "code": f"http_{exc.status_code}",
        "title": "Not here" if exc.status_code == 404 else "Refused",
        "message": str(exc.detail),
        "hint": None,
        "request_id": None,
    }
    return render(request, "error.html", {"error": body}, status=exc.status_code)


async def crash(request: Request, exc: Exception) -> Response:
    request_id = uuid.uuid4().hex[:12]
    log.error(
        "page %s failed unexpectedly (request id %s)", request.url.path, request_id, exc_info=exc
    )
    return Response(
        f"The dashboard failed unexpectedly (request id {request_id}); the details are in the "
        "server log.",
        status_code=500,
        media_type="text/plain",
    )


def _quoted(path: str) -> str:
    from urllib.parse import quote

    return quote(path, safe="/")
