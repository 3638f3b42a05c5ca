"""The browser-facing defences: security headers on every response, and the checks a state-changing
request passes before any handler runs (same origin, then the CSRF token of the login)."""

from __future__ import annotations

import hmac
from urllib.parse import urlsplit

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kenning.core.settings import Settings
from web_ui.errors import Forbidden

# No inline script or style anywhere: everything comes from /static, so an injected tag cannot run.
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; form-action "
    "'self'; frame-ancestors 'none'; base-uri 'none'; object-src 'none'"
)
HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cross-origin-opener-policy": "same-origin",
    "permissions-policy": "camera=(), microphone=(), geolocation=()",
}
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
# "none": the person typed the URL or used a bookmark
SAME_SITE = frozenset({"same-origin", "none"})


class SecurityHeaders:
    """Adds ``HEADERS`` (and ``Cache-Control: no-store`` for pages) to every response."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        static = str(scope.get("path", "")).startswith("/static/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers.setdefault(name, value)
                # pages show memory content: never kept in a shared or back-button cache
                if not static:
                    headers.setdefault("cache-control", "no-store")
            await send(message)

        await self.app(scope, receive, send_with_headers)


def own_origin(request: Request, settings: Settings) -> str:
    """The origin forms must come from: the public URL's, else the one the request was sent to."""
    if settings.web_public_url:
        parts = urlsplit(settings.web_public_url)
        return f"{parts.scheme}://{parts.netloc}".lower()
    return f"{request.url.scheme}://{request.url.netloc}".lower()


def check_origin(request: Request, settings: Settings) -> None:
    """Refuse a state-changing request another site made the browser send.

    Browsers send ``Sec-Fetch-Site`` and ``Origin`` on such requests; a client that sends neither
    (curl, a script) still needs the CSRF token, which only a page of this site can read.
    """
    site = request.headers.get("sec-fetch-site")
    if site is not None and site not in SAME_SITE:
        raise Forbidden(
            f"a form from another site ({site}) was refused",
            hint="open the dashboard itself and submit the form there",
        )
    origin = request.headers.get("origin")
    if origin is not None and origin.lower() != own_origin(request, settings):
        raise Forbidden(
            "a form from another origin was refused",
            hint="set KENNING_WEB_PUBLIC_URL to the address people use to reach the dashboard",
        )


def check_token(sent: str | None, expected: str) -> None:
    """The form's CSRF token must equal the login's (compared in constant time)."""
    if not sent or not hmac.compare_digest(sent.encode(), expected.encode()):
        raise Forbidden(
            "the form's security token is missing or stale",
            hint="reload the page and submit the form again",
        )


def secure_cookies(request: Request, settings: Settings) -> bool:
    """Mark cookies Secure when the dashboard is served over TLS
    (directly, or per its public URL)."""
    if settings.web_public_url:
        return settings.web_public_url.lower().startswith("https://")
    return request.url.scheme == "https"
