"""Login and logout. The login form carries a token of its own (a cookie it must match), so
another site cannot sign a browser in to an account of its choosing; logout ends
the session on the server."""

from __future__ import annotations

import hmac
import secrets
from typing import Any

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from kenning.core.errors import RateLimited
from web_ui.errors import Forbidden
from web_ui.forms import form_of
from web_ui.guard import COOKIE, current_login, guard
from web_ui.runtime import runtime
from web_ui.security import check_origin, secure_cookies
from web_ui.views import render

LOGIN_COOKIE = "kenning_login"
MAX_NAME = 64
MAX_PASSWORD = 1024


def _next(value: str | None) -> str:
    """Where to go after login: a path of this site only (never //other.site or a URL)."""
    if value and value.startswith("/") and not value.startswith("//") and "\\" not in value:
        return value
    return "/"


def _refused(title: str, message: str, hint: str | None = None) -> dict[str, str | None]:
    """A refused login in the shape every page's error box reads (base.html)."""
    return {"title": title, "message": message, "hint": hint, "code": "login_failed"}


def _form(request: Request, data: dict[str, Any], status: int = 200) -> Response:
    token = request.cookies.get(LOGIN_COOKIE) or secrets.token_urlsafe(32)
    data.setdefault("next", _next(request.query_params.get("next")))
    response = render(request, "login.html", {**data, "login_token": token}, status=status)
    response.set_cookie(
        LOGIN_COOKIE,
        token,
        httponly=True,
        samesite="strict",
        path="/login",
        secure=secure_cookies(request, runtime(request).settings),
    )
    return response


async def login_page(request: Request) -> Response:
    if await current_login(request) is not None:
        return RedirectResponse(_next(request.query_params.get("next")), status_code=303)
    return _form(request, {})


def _check_login_token(request: Request, form: dict[str, str]) -> None:
    """The form's token must equal its cookie (set with the form): a login from this page."""
    expected = request.cookies.get(LOGIN_COOKIE, "")
    if not expected or not hmac.compare_digest(
        form.get("login_token", "").encode(), expected.encode()
    ):
        raise Forbidden(
            "the login form's token is missing or stale", hint="reload the login page and try again"
        )


def _again(
    request: Request, error: dict[str, str | None], username: str, target: str, status: int
) -> Response:
    """The form once more, with why the login was refused and the name typed."""
    return _form(request, {"error": error, "username": username, "next": target}, status=status)


async def login_submit(request: Request) -> Response:
    rt = runtime(request)
    check_origin(request, rt.settings)
    form = await form_of(request)
    _check_login_token(request, form)
    username, password = form.get("username", ""), form.get("password", "")
    target = _next(form.get("next"))
    if not username or not password or len(username) > MAX_NAME or len(password) > MAX_PASSWORD:
        error = _refused("Not signed in", "Enter your user name and password.")
        return _again(request, error, username[:MAX_NAME], target, 400)
    ip = request.client.host if request.client else None
    try:
        login = await rt.run(rt.logins.login, username, password, ip=ip)
    except RateLimited as exc:
        rt.metrics.failed_logins.inc()
        error = _refused("Too many attempts", exc.message, exc.hint)
        return _again(request, error, username, target, 429)
    if login is None:
        rt.metrics.failed_logins.inc()
        wrong = "Wrong user name or password, or the account is disabled."
        return _again(request, _refused("Not signed in", wrong), username, target, 401)
    response = RedirectResponse(target, status_code=303)
    response.set_cookie(
        COOKIE,
        login.sid,
        httponly=True,
        samesite="lax",
        path="/",
        max_age=int(rt.settings.web_session_hours * 3600),
        secure=secure_cookies(request, rt.settings),
    )
    response.delete_cookie(LOGIN_COOKIE, path="/login")
    return response


@guard("viewer")
async def logout(request: Request) -> Response:
    rt = runtime(request)
    await rt.run(rt.logins.logout, request.cookies[COOKIE])
    response = RedirectResponse("/login", status_code=303)
    response.delete_cookie(COOKIE, path="/")
    return response


routes = [
    Route("/login", login_page, methods=["GET"]),
    Route("/login", login_submit, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
]
