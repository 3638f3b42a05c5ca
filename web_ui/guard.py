"""Who may open a page or submit a form: ``@guard(role)`` on every endpoint but /login, /healthz
and /metrics. A safe request needs a live login with the role; a state-changing one also passes the
origin check and carries the login's CSRF token (``csrf`` form field) -- before the handler runs."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from kenning.access.accounts import ROLES
from web_ui.errors import Forbidden, LoginRequired
from web_ui.runtime import runtime
from web_ui.security import SAFE_METHODS, check_origin, check_token
from web_ui.sessions import Login

COOKIE = "kenning_session"
Endpoint = Callable[[Request], Awaitable[Response]]


async def current_login(request: Request) -> Login | None:
    sid = request.cookies.get(COOKIE)
    if not sid or len(sid) > 200:
        return None
    rt = runtime(request)
    return await rt.run(rt.logins.current, sid)


def guard(role: str) -> Callable[[Endpoint], Endpoint]:
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}")

    def wrap(endpoint: Endpoint) -> Endpoint:
        @functools.wraps(endpoint)
        async def guarded(request: Request) -> Response:
            await admit(request, role)
            return await endpoint(request)

        return guarded

    return wrap


async def admit(request: Request, role: str) -> Login:
    """The checks of ``guard``, in order: origin (forms), login, role, CSRF token (forms)."""
    unsafe = request.method not in SAFE_METHODS
    if unsafe:
        check_origin(request, runtime(request).settings)
    login = await current_login(request)
    if login is None:
        raise LoginRequired
    request.state.login = login
    if not login.may(role):
        raise Forbidden(
            f"this needs the {role} role; you are signed in as {login.role}",
            hint="ask an admin to change your role",
        )
    if unsafe:
        form = await request.form()
        sent = form.get("csrf")
        check_token(sent if isinstance(sent, str) else None, login.csrf)
    return login
