"""The one place that words a refused JSON-RPC message (docs/reliability.md, "Bounded echoes").

The MCP SDK answers a body that is not JSON, or not a JSON-RPC 2.0 message, with a 400 whose
``error.message`` is pydantic's report: every union member tried, each quoting the caller's input
(``input_value=...``, unbounded) and linking pydantic's docs. This ASGI middleware keeps the status,
the JSON-RPC code and the id, and replaces the message with the project's words: what was wrong,
what a message needs, that nothing was done. Tool arguments are worded by
``mcp_server.errors.invalid_arguments``; other responses pass through untouched.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from kenning.core.errors import bounded
from mcp_server.unauthorized import MCP_PATHS

PARSE_ERROR, INVALID_PARAMS = -32700, -32602
NEEDS = (
    'one JSON-RPC 2.0 message as the body: {"jsonrpc": "2.0", "method": ..., "id": ...} for a '
    'request (no "id" for a notification); nothing was done'
)
LIMIT = 64 * 1024  # a refusal is short; a longer 400 body is passed on as it is


def worded(error: dict[str, Any]) -> dict[str, Any]:
    """The project's wording of a transport-level JSON-RPC error. Pure."""
    code, said = error.get("code"), str(error.get("message", ""))
    if code == PARSE_ERROR:
        where = said.split(": ", 1)[1] if ": " in said else "it does not parse"
        text = f"parse_error: the body is not valid JSON ({bounded(where, 120)}) (hint: {NEEDS})"
        return {"code": code, "message": text}
    if said.startswith("Validation error"):
        text = f"invalid_request: the body is not a JSON-RPC 2.0 message (hint: {NEEDS})"
        return {"code": code, "message": text}
    return {**error, "message": bounded(said, 300)}


def rewrite(body: bytes) -> bytes | None:
    """A refused message's body in the project's words, or None to pass it on as it is."""
    try:
        reply = json.loads(body)
    except ValueError:
        return None
    if not isinstance(reply, dict) or not isinstance(reply.get("error"), dict):
        return None
    return json.dumps({**reply, "error": worded(reply["error"])}).encode()


class RpcWording:
    """Rewrites the 400 JSON-RPC errors of the MCP endpoints (see the module docstring)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(MCP_PATHS):
            await self.app(scope, receive, send)
            return
        start: Message | None = None
        parts: list[bytes] = []

        async def reply(message: Message) -> None:
            nonlocal start
            if message["type"] == "http.response.start" and message["status"] == 400:
                start = message  # held until the body is known
                return
            if start is None or message["type"] != "http.response.body":
                await send(message)
                return
            parts.append(message.get("body", b""))
            if message.get("more_body", False) and sum(map(len, parts)) < LIMIT:
                return
            original = b"".join(parts)
            body = rewrite(original) if not message.get("more_body", False) else None
            await send(_start(start, body) if body is not None else start)
            await send({**message, "body": original if body is None else body})
            start = None

        await self.app(scope, receive, reply)


def _start(start: Message, body: bytes) -> Message:
    headers = [(k, v) for k, v in start.get("headers", []) if k.lower() != b"content-length"]
    headers.append((b"content-length", str(len(body)).encode()))
    return {**start, "headers": headers}
