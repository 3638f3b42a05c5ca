"""A scripted model for Claude Code: a local server speaking the Anthropic Messages API (streamed
or not) that drives the session through Kenning's MCP tools as Claude Code offers them. Its first
answer calls ``remember``, the next ``recall``, the last repeats what recall returned; a request
that offers no Kenning tool (Claude Code's side calls) gets a short text. Every body is kept.

No test touches the internet: this server is the process edge (ANTHROPIC_BASE_URL points at it).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.conftest import free_port

Block = dict[str, Any]


@dataclass
class ScriptedModel:
    remember: dict[str, Any]  # the arguments of each call
    recall: dict[str, Any]
    server: str = "kenning"
    port: int = field(default_factory=free_port)
    requests: list[dict[str, Any]] = field(default_factory=list)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def answer(self, body: dict[str, Any]) -> tuple[list[Block], str]:
        """The content blocks of the next reply and its stop reason."""
        self.requests.append(body)
        offered = {tool.get("name") for tool in body.get("tools", [])}
        remember, recall = f"mcp__{self.server}__remember", f"mcp__{self.server}__recall"
        if not {remember, recall} <= offered:
            return [{"type": "text", "text": "ok"}], "end_turn"
        results = {
            block["tool_use_id"]: block
            for message in body.get("messages", [])
            if message.get("role") == "user" and isinstance(message.get("content"), list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        }
        if "toolu_recall" in results:
            said = _text(results["toolu_recall"])
            return [{"type": "text", "text": f"recall said: {said}"}], "end_turn"
        if "toolu_remember" in results:
            return [_use("toolu_recall", recall, self.recall)], "tool_use"
        return [_use("toolu_remember", remember, self.remember)], "tool_use"


def _use(tool_id: str, name: str, arguments: dict[str, Any]) -> Block:
    return {"type": "tool_use", "id": tool_id, "name": name, "input": arguments}


def _text(result: Block) -> str:
    content = result.get("content")
    if isinstance(content, str):
        return content
    return " ".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def _message(blocks: list[Block], stop: str) -> dict[str, Any]:
    return {
        "id": "msg_scripted",
        "type": "message",
        "role": "assistant",
        "model": "claude-scripted",
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def _events(blocks: list[Block], stop: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """The server-sent events of a streamed reply carrying ``blocks``."""
    yield "message_start", {"type": "message_start", "message": _message([], "")}
    for index, block in enumerate(blocks):
        start: Block
        delta: Block
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield (
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": start},
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 1},
        },
    )
    yield "message_stop", {"type": "message_stop"}


@contextmanager
def serving(model: ScriptedModel) -> Iterator[ScriptedModel]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if not self.path.startswith("/v1/messages") or self.path.startswith(
                "/v1/messages/count_tokens"
            ):
                self._send(200, "application/json", json.dumps({"input_tokens": 1}).encode())
                return
            blocks, stop = model.answer(body)
            if body.get("stream"):
                stream = "".join(
                    f"event: {name}\ndata: {json.dumps(data)}\n\n"
                    for name, data in _events(blocks, stop)
                )
                self._send(200, "text/event-stream", stream.encode())
            else:
                self._send(200, "application/json", json.dumps(_message(blocks, stop)).encode())

        def do_GET(self) -> None:
            self._send(404, "application/json", b'{"type":"error"}')

        def _send(self, status: int, kind: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", model.port), Handler)
    thread = threading.Thread(target=server.serve_forever, name="scripted-model", daemon=True)
    thread.start()
    try:
        yield model
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
