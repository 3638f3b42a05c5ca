"""The login and consent pages (server-rendered, CSRF-protected; docs/remote-access.md).

GET /oauth/consent?request=ID shows the login form, or, with a live session, what the client asks
for: its name, where the answer goes (the redirect host) and the scopes, each of which the person
may untick. The login form carries the pending request's CSRF token; the consent form the session's.
Sessions (kenning.access.sessions) are shared with the dashboard: one cookie, one login.

Both forms are accepted only from the pages themselves: a POST whose browser says it came from
another origin (``Origin``, ``Sec-Fetch-Site``) is refused before its fields are read
(docs/remote-access.md#what-the-browser-sends).
"""

from __future__ import annotations

import hmac
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jinja2 import Environment, FileSystemLoader, select_autoescape
from mcp.server.auth.provider import construct_redirect_uri
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Route

from kenning.access.accounts import Accounts
from kenning.access.oauth import AuthRequest
from kenning.access.sessions import Sessions
from kenning.core.errors import KenningError, PermissionDenied, RateLimited
from mcp_server.oauth.provider import CONSENT_PATH, KenningOAuthProvider

SESSION_COOKIE = "kenning_session"
SESSION_SECONDS = 12 * 3600
LOGIN_PATH = "/oauth/login"
SCOPE_TEXT = {
    "read": "read your memories (recall, briefings, history)",
    "write": "add, change and forget memories",
    "admin": "administer Kenning (maintenance, restores, every tool)",
    "offline_access": "stay connected: refresh its access without asking you again",
    # a profile only narrows what the client is shown (docs/mcp-tools.md, "Tool profiles")
    "profile:agent": "be shown only the tools an agent uses mid-task",
    "profile:curator": "be shown the review tools (contradictions, duplicates, skills)",
    "profile:all": "be shown every tool the scopes above allow",
}
# Referrer-Policy is "same-origin", never "no-referrer": under "no-referrer" a browser sends
# `Origin: null` with every form POST (the Fetch standard's "serializing a request origin"), and the
# Host/Origin guard, which must refuse `null`, refused the login and consent forms in every browser
# (issue 30). "same-origin" sends the page's real origin with its own forms and still no Referer at
# all to another origin: the client's redirect URI, where the browser goes next with the code, never
# sees the request id of the consent page's URL.
# The CSP has no form-action: Chromium applies it to the redirect that answers the consent POST, and
# that redirect goes to the client (another origin, or an app's own scheme).
HEADERS = {
    "Cache-Control": "no-store",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": (
        "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"
    ),
}
FOREIGN_FORM = (
    "This form was sent from another page than Kenning's own, so nothing was done. Start the "
    "connection again from your MCP client and answer on the page it opens."
)


def origin_of(url: str) -> str:
    """``url``'s origin as a browser writes it in ``Origin``: lower case, no default port."""
    parts = urlsplit(url)
    scheme, netloc = parts.scheme.lower(), parts.netloc.rpartition("@")[2].lower()
    default = {"http": ":80", "https": ":443"}.get(scheme)
    if default and netloc.endswith(default):
        netloc = netloc[: -len(default)]
    return f"{scheme}://{netloc}"


def from_elsewhere(request: Request, own: str) -> bool:
    """Whether the browser says this POST came from another origin than ``own``.

    A browser sends both headers with a form POST; ``Origin: null`` (an opaque or hidden origin)
    counts as elsewhere. A client that sends neither (curl, a script) cannot carry a person's
    session cookie into it, and still needs the form's CSRF token.
    """
    site = request.headers.get("sec-fetch-site")
    origin = request.headers.get("origin")
    return (site is not None and site != "same-origin") or (
        origin is not None and origin.strip().lower() != own
    )


_templates = Environment(
    loader=FileSystemLoader(Path(__file__).with_name("templates")),
    autoescape=select_autoescape(["html"]),
)


class ConsentPages:
    def __init__(
        self, provider: KenningOAuthProvider, accounts: Accounts, sessions: Sessions
    ) -> None:
        self.provider = provider
        self.oauth = provider.oauth
        self.accounts = accounts
        self.sessions = sessions
        self.secure = provider.base.startswith("https://")
        # the public URL's: behind a proxy the Host may be anything, the page's origin is this one
        self.origin = origin_of(provider.base)

    def routes(self) -> list[Route]:
        return [
            Route(CONSENT_PATH, self.show, methods=["GET"]),
            Route(CONSENT_PATH, self.answer, methods=["POST"]),
            Route(LOGIN_PATH, self.login, methods=["POST"]),
        ]

    def _page(self, name: str, status: int = 200, **values: Any) -> HTMLResponse:
        return HTMLResponse(
            _templates.get_template(name).render(**values), status_code=status, headers=HEADERS
        )

    def _error(self, status: int, message: str) -> HTMLResponse:
        return self._page("error.html", status, message=message)

    async def show(self, request: Request) -> Response:
        pending = await self.provider.run(
            self.oauth.pending, request.query_params.get("request", "")
        )
        if pending is None:
            return self._error(
                400,
                "This authorization request has expired or was already answered. "
                "Start the connection again from your MCP client.",
            )
        session = await self.provider.run(self.sessions.get, request.cookies.get(SESSION_COOKIE))
        if session is None:
            return await self._login_page(pending)
        return await self._consent_page(pending, session.username, session.role, session.csrf_token)

    async def _login_page(
        self, pending: AuthRequest, status: int = 200, error: str = ""
    ) -> HTMLResponse:
        client = await self.provider.run(self.oauth.client, pending.client_id)
        return self._page(
            "login.html",
            status,
            request_id=pending.id,
            csrf=pending.csrf,
            error=error,
            client_name=client.name if client else "an MCP client",
            action=self.provider.base + LOGIN_PATH,
        )

    async def _consent_page(
        self,
        pending: AuthRequest,
        username: str,
        role: str,
        csrf: str,
        status: int = 200,
        error: str = "",
    ) -> HTMLResponse:
        client = await self.provider.run(self.oauth.client, pending.client_id)
        if client is None:
            return self._error(400, "The client that asked was revoked. Connect it again.")
        allowed = self.oauth.grantable(pending, role)
        scopes = [
            {"name": s, "text": SCOPE_TEXT[s], "allowed": s in allowed} for s in pending.scopes
        ]
        target = urlsplit(pending.redirect_uri)
        return self._page(
            "consent.html",
            status,
            request_id=pending.id,
            csrf=csrf,
            client_name=client.name,
            redirect_host=target.hostname or f"{target.scheme}:",
            redirect_scheme=target.scheme,
            scopes=scopes,
            username=username,
            role=role,
            error=error,
            action=self.provider.base + CONSENT_PATH,
        )

    async def login(self, request: Request) -> Response:
        if from_elsewhere(request, self.origin):
            return self._error(403, FOREIGN_FORM)
        form = await request.form()
        pending = await self.provider.run(self.oauth.pending, str(form.get("request", "")))
        if pending is None:
            return self._error(
                400, "This authorization request has expired. Start again from your MCP client."
            )
        if not hmac.compare_digest(pending.csrf, str(form.get("csrf", ""))):
            return self._error(
                403, "The form's security token did not match; nothing was done. Reload the page."
            )
        ip = request.client.host if request.client else "unknown"
        try:
            account = await self.provider.run(
                self.accounts.authenticate,
                str(form.get("username", "")),
                str(form.get("password", "")),
                ip=ip,
            )
        except RateLimited as exc:
            return await self._login_page(pending, 429, str(exc))
        except PermissionDenied as exc:
            return await self._login_page(pending, 401, exc.message)
        session_id, _ = await self.provider.run(
            self.sessions.create, account.username, ttl_seconds=SESSION_SECONDS
        )
        # absolute, through the public URL, so it also works behind a proxy
        # that strips a path prefix
        response = RedirectResponse(
            f"{self.provider.base}{CONSENT_PATH}?request={pending.id}",
            status_code=303,
            headers=HEADERS,
        )
        response.set_cookie(
            SESSION_COOKIE,
            session_id,
            max_age=SESSION_SECONDS,
            httponly=True,
            secure=self.secure,
            samesite="lax",
            path="/",
        )
        return response

    async def answer(self, request: Request) -> Response:
        if from_elsewhere(request, self.origin):
            return self._error(403, FOREIGN_FORM)
        form = await request.form()
        session = await self.provider.run(self.sessions.get, request.cookies.get(SESSION_COOKIE))
        if session is None:
            return self._error(
                401,
                "Your login has expired; nothing was granted. Start again from your MCP client.",
            )
        if not session.csrf_ok(str(form.get("csrf", ""))):
            return self._error(403, "The form's security token did not match; nothing was granted.")
        request_id = str(form.get("request", ""))
        try:
            if form.get("action") != "approve":
                denied = await self.provider.run(self.oauth.deny, request_id, session.username)
                return self._back(denied, error="access_denied")
            chosen = [str(s) for s in form.getlist("scope")]
            code, pending = await self.provider.run(
                self.oauth.approve, request_id, session.username, chosen
            )
        except KenningError as exc:
            pending_now = await self.provider.run(self.oauth.pending, request_id)
            if pending_now is None:
                return self._error(400, exc.message)
            return await self._consent_page(
                pending_now, session.username, session.role, session.csrf_token, 400, exc.message
            )
        return self._back(pending, code=code)

    def _back(self, pending: AuthRequest, **params: str) -> Response:
        """Send the browser back to the client with the code (or the error) and its state."""
        target = construct_redirect_uri(pending.redirect_uri, state=pending.state, **params)
        return RedirectResponse(target, status_code=302, headers={"Cache-Control": "no-store"})
