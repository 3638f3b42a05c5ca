"""The one place that words a 401: what was wrong and how to get a working token.

FastMCP's own 401 tells clients to "re-register", which only an OAuth server can offer; Kenning's
tokens come from ``kenning token create``. This ASGI middleware rewrites the body (and the
``error_description`` of the ``WWW-Authenticate`` challenge) of every 401, keeping its status and
the challenge's other parameters.
"""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CREATE = "create one with `kenning token create --name NAME --scope read` (or write, admin)"
MISSING = (
    f"this server needs a bearer token: {CREATE} and send it as `Authorization: Bearer <token>`"
)
INVALID = (
    "the bearer token is not known to this server (revoked, mistyped, or another "
    f"installation's): {CREATE}"
)
_DESCRIPTION = re.compile(r'error_description="[^"]*"')


def body(has_token: bool) -> dict[str, str]:
    """The JSON body of a 401: ``missing_token`` or ``invalid_token``, with how to get one."""
    if has_token:
        return {"error": "invalid_token", "error_description": INVALID}
    return {"error": "missing_token", "error_description": MISSING}


# The MCP endpoints whose 401 this words; the OAuth server's own endpoints (/token, /login, ...)
# answer in their RFCs' terms and pass through untouched.
MCP_PATHS = ("/mcp", "/sse", "/messages")


class Unauthorized:
    """Rewrites 401 responses of the MCP endpoints (everything else passes through untouched)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(MCP_PATHS):
            await self.app(scope, receive, send)
            return
        has_token = any(
            name.lower() == b"authorization" and value[:7].lower() == b"bearer "
            for name, value in scope.get("headers", [])
        )
        rewriting = False

        async def reply(message: Message) -> None:
            nonlocal rewriting
            if message["type"] == "http.response.start" and message["status"] == 401:
                rewriting = True
                message = {**message, "headers": _headers(message.get("headers", []), has_token)}
            elif rewriting and message["type"] == "http.response.body":
                if message.get("more_body", False):
                    return  # the original body is dropped; ours goes out with its last part
                message = {"type": "http.response.body", "body": _encoded(has_token)}
            await send(message)

        await self.app(scope, receive, reply)


def _encoded(has_token: bool) -> bytes:
    return json.dumps(body(has_token)).encode()


def _headers(headers: Any, has_token: bool) -> list[tuple[bytes, bytes]]:
    out: list[tuple[bytes, bytes]] = []
    for name, value in headers:
        lower = name.lower()
        if lower in (b"content-length", b"content-type"):
            continue
        if lower == b"www-authenticate":
            description = body(has_token)["error_description"].replace('"', "'")
            out.append(
                (
                    name,
                    _DESCRIPTION.sub(f'error_description="{description}"', value.decode()).encode(),
                )
            )
        else:
            out.append((name, value))
    out += [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(_encoded(has_token))).encode()),
    ]
    return out
