"""A scripted model server for `kenning bench --llm`: it speaks the Anthropic Messages API shape on
127.0.0.1 and answers every extra at once (or after ``delay`` seconds) with a plausible structured
answer made from the request's own data, so the benchmark measures Kenning's side of the extras
(client, JSON, cache, extra embeddings and searches, queue) and never a model. No
network beyond the loopback.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def reply_for(system: str, data: dict[str, Any]) -> dict[str, Any]:
    """The structured answer to one request, chosen by the schema the
    system prompt asks for. Pure."""
    if '"queries"' in system:
        query = str(data.get("query", ""))
        return {
            "queries": [
                f"{query} (how it is done)",
                f"notes about: {query}",
                f"the reason for {query}",
            ]
        }
    if '"facts"' in system:
        sentences = [
            s.strip() for s in _SENTENCE.split(str(data.get("memory", ""))) if len(s.strip()) > 20
        ]
        return {"facts": [f"Fact: {s}" for s in sentences[:2]]}
    if '"summary"' in system:
        return {"summary": "A scripted summary of the entries."}
    return {"verdict": "unknown", "reason": "scripted server"}


class ScriptedModel:
    """Counts the requests it answered; ``delay`` stands in for a model's own time."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self.answered = 0
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(
                    self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}"
                )
                data = json.loads(body["messages"][0]["content"])
                text = json.dumps(reply_for(str(body.get("system", "")), data))
                if model.delay:
                    time.sleep(model.delay)
                payload = json.dumps(
                    {
                        "id": "msg_bench",
                        "type": "message",
                        "role": "assistant",
                        "model": body.get("model", ""),
                        "content": [{"type": "text", "text": text}],
                        "stop_reason": "end_turn",
                        "stop_sequence": None,
                        "usage": {
                            "input_tokens": len(json.dumps(body)) // 4,
                            "output_tokens": len(text) // 4,
                        },
                    }
                ).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
                model.answered += 1

            def log_message(self, *args: Any) -> None:
                pass

        return Handler


@contextmanager
def scripted_model(delay: float = 0.0) -> Iterator[ScriptedModel]:
    model = ScriptedModel(delay)
    thread = threading.Thread(target=model.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield model
    finally:
        model.httpd.shutdown()
        model.httpd.server_close()
