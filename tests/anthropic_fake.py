"""A local HTTP server that speaks the Anthropic Messages API shape (Kenning's client,
kenning.llm.messages, points at it with ``base_url``): each request takes the next scripted reply;
every request's path, headers and body are recorded.

No test touches the internet: this server is the process edge.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import valkey

from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.runtime.embedding import Embedder
from tests.conftest import free_port, make_settings


@dataclass
class Reply:
    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    hold: threading.Event | None = None  # answer only once the test sets it
    trickle: float = 0.0  # seconds between the body's bytes (each read is quick; the whole is slow)
    raw: bytes | None = None  # sent as the body instead of ``body`` as JSON (a non-JSON answer)
    truncated: bool = False  # the connection closes half-way through the announced body


def message(
    text: str, *, stop_reason: str = "end_turn", input_tokens: int = 40, output_tokens: int = 10
) -> Reply:
    return Reply(
        body={
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "claude-fake",
            "content": [{"type": "text", "text": text}],
            "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
        }
    )


def answer(payload: dict[str, Any], **kwargs: Any) -> Reply:
    return message(json.dumps(payload), **kwargs)


def non_json(text: str = "<html>502 Bad Gateway</html>") -> Reply:
    """A 200 whose body is not JSON at all (a proxy's page, a broken gateway)."""
    return Reply(raw=text.encode())


def truncated(payload: dict[str, Any]) -> Reply:
    """A well-formed answer cut off half-way: the connection closes before the announced length."""
    reply = answer(payload)
    reply.truncated = True
    return reply


def wrong_shape(body: dict[str, Any] | None = None) -> Reply:
    """A 200 JSON body that is not a Messages API message (no content, no usage)."""
    return Reply(body=body if body is not None else {"result": "ok", "choices": []})


def slow(reply: Reply, seconds: float) -> Reply:
    reply.delay = seconds
    return reply


def error(status: int, kind: str = "api_error", headers: dict[str, str] | None = None) -> Reply:
    return Reply(
        status=status,
        body={"type": "error", "error": {"type": kind, "message": f"scripted {status}"}},
        headers=headers or {},
    )


class FakeAnthropic:
    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.heads: list[tuple[str, dict[str, str]]] = []  # (path, headers) of each request
        self.received = threading.Event()
        self.port = free_port()
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def then(self, *replies: Reply) -> FakeAnthropic:
        self.script.extend(replies)
        return self

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                fake.heads.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
                fake.requests.append(json.loads(self.rfile.read(length) or b"{}"))
                fake.received.set()
                reply = fake.script.pop(0) if fake.script else error(500)
                if reply.hold is not None:
                    reply.hold.wait(60)
                if reply.delay:
                    time.sleep(reply.delay)
                data = reply.raw if reply.raw is not None else json.dumps(reply.body or {}).encode()
                announced = len(data)
                if reply.truncated:
                    data = data[: len(data) // 2]
                try:
                    self.send_response(reply.status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(announced))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    if reply.trickle:
                        for i in range(len(data)):
                            self.wfile.write(data[i : i + 1])
                            self.wfile.flush()
                            time.sleep(reply.trickle)
                    else:
                        self.wfile.write(data)
                    if reply.truncated:
                        self.wfile.flush()
                        self.close_connection = True
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test, or a killed worker)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


def serve() -> Iterator[FakeAnthropic]:
    fake = FakeAnthropic()
    fake.thread.start()
    try:
        yield fake
    finally:
        fake.server.shutdown()
        fake.server.server_close()


# what the LLM tests leave out unless they test it: second-tier verdicts, retries
QUIET = {"llm_contradiction_verdicts": False, "llm_max_retries": 0}


def keyed_engine(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    fake: FakeAnthropic,
    **values: Any,
) -> Engine:
    """An engine whose LLM extras call ``fake``, with ``values`` over the settings."""
    return Engine.open(with_key(settings, fake, **values), client, embedder, clock=clock)


def with_key(settings: Settings, fake: FakeAnthropic, **overrides: Any) -> Settings:
    """``settings`` with an API key and the base URL of ``fake`` (the LLM extras on)."""
    values: dict[str, Any] = {
        "key_prefix": settings.key_prefix,
        "anthropic_api_key": "sk-test-not-real",
        "anthropic_base_url": fake.url,
        "llm_max_retries": 2,
        "llm_timeout_seconds": 2.0,
    }
    values.update(overrides)
    return make_settings(settings.data_dir, settings.valkey_port, **values)
