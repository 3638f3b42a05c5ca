"""A cap on the Streamable HTTP sessions one token holds open (docs/reliability.md).

The SDK ends a session after ``KENNING_MCP_SESSION_IDLE_SECONDS`` without a request and caps the
sessions of the whole server; it has no cap per caller, so one token that opens sessions and never
closes them could take them all. This middleware counts, per token, the sessions it has opened and
not closed (DELETE) or left idle past the timeout, and refuses a new one over the cap with 429.
Its count is an upper bound of what the SDK keeps: a session it forgets has expired there too.

The check is atomic: a new session's place is taken (``pending``) in the same step as the count is
read -- the event loop runs no other request in between -- and given back when the answer carries
no session, so N opens in parallel against a cap of k admit exactly k.
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
        self.pending: dict[str, int] = {}  # token digest -> opens admitted, not yet answered

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
        if scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        if len(sessions) + self.pending.get(owner, 0) >= self.per_token:
            await _refuse(send, self.per_token, self.idle_seconds)
            return
        self.pending[owner] = self.pending.get(owner, 0) + 1  # the place is taken now
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                left = self.pending[owner] - 1
                if left:
                    self.pending[owner] = left
                else:
                    del self.pending[owner]

        async def noting(message: Message) -> None:
            if message["type"] == "http.response.start":
                opened = Headers(raw=message.get("headers", [])).get(SESSION_HEADER)
                if opened is not None:
                    sessions[opened] = self.clock()
                release()  # a session now, or no session at all
            await send(message)

        try:
            await self.app(scope, receive, noting)
        finally:
            release()

    def _live(self, owner: str) -> dict[str, float]:
        """The owner's sessions that may still be open (idle ones are
        forgotten, as the SDK ends them)."""
        now = self.clock()
        sessions = self.seen.setdefault(owner, {})
        for session, at in list(sessions.items()):  # in place: a request in flight holds it
            if now - at >= self.idle_seconds:
                del sessions[session]
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
