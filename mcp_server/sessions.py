"""A cap on the Streamable HTTP sessions one token holds open (docs/reliability.md).

The SDK ends a session after ``KENNING_MCP_SESSION_IDLE_SECONDS`` without a request and caps the
sessions of the whole server; it has no cap per caller, so one token that opens sessions and never
closes them could take them all. This middleware counts, per token, the sessions it has opened and
not closed (DELETE) or left idle past the timeout, and refuses a new one over the cap with 429.
Its count is an upper bound of what the SDK keeps: a session it forgets has expired there too.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SESSION_HEADER = "mcp-session-id"


class SessionCap:
    """ASGI middleware in front of the MCP endpoint at ``path``."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        path: str,
        per_token: int,
        idle_seconds: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.app = app
        self.path = path
        self.per_token = per_token
        self.idle_seconds = idle_seconds
        self.clock = clock
        self.seen: dict[str, dict[str, float]] = {}  # token digest -> session id -> last request

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].rstrip("/") != self.path:
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        owner = hashlib.sha256(headers.get("authorization", "").encode()).hexdigest()
        sessions = self._live(owner)
        session = headers.get(SESSION_HEADER)
        if session is not None:
            if session in sessions:
                sessions[session] = self.clock()
            if scope["method"] == "DELETE":
                sessions.pop(session, None)
            await self.app(scope, receive, send)
            return
        if scope["method"] == "POST" and len(sessions) >= self.per_token:
            await _refuse(send, self.per_token, self.idle_seconds)
            return

        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start":
                opened = Headers(raw=message.get("headers", [])).get(SESSION_HEADER)
                if opened is not None:
                    sessions[opened] = self.clock()
            await send(message)

        await self.app(scope, receive, noting)

    def _live(self, owner: str) -> dict[str, float]:
        """The owner's sessions that may still be open (idle ones are
        forgotten, as the SDK ends them)."""
        now = self.clock()
        sessions = {
            s: at for s, at in self.seen.get(owner, {}).items() if now - at < self.idle_seconds
        }
        self.seen[owner] = sessions
        return sessions


async def _refuse(send: Send, cap: int, idle: float) -> None:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": None,
            "error": {
                "code": -32000,
                "message": (
                    f"this token holds {cap} open MCP sessions, the most allowed; close "
                    f"unused ones (HTTP DELETE) or wait: a session ends after {idle:g}s idle"
                ),
            },
        }
    )
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [(b"content-type", b"application/json")],
        }
    )
    await send({"type": "http.response.body", "body": body.encode()})
