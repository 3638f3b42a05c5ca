"""The Anthropic Messages API over httpx: the one request the LLM extras send (docs/llm.md). The
only module that speaks to Anthropic; no SDK (its 35 MB of types served this one POST: README
"Sizes").

What a caller tells apart: ``StatusError`` (an HTTP error status, the response kept for its
Retry-After), ``ConnectionFailure`` (no connection, a timeout, a body cut off) and ``ValueError``
(a 200 whose body is not JSON). The reply is the decoded JSON as it came: its shape is the
caller's to check.
"""

from __future__ import annotations

from typing import Any

import httpx

API_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"


class StatusError(Exception):
    """The API answered with an error status (4xx, 5xx)."""

    def __init__(self, response: httpx.Response) -> None:
        kind = _error_type(response)
        super().__init__(f"HTTP {response.status_code}" + (f" {kind}" if kind else ""))
        self.response = response
        self.status_code = response.status_code


def _error_type(response: httpx.Response) -> str:
    """The API's error type (``rate_limit_error``, ``overloaded_error``, ...), "" when unsaid."""
    try:
        kind = response.json()["error"]["type"]
    except (ValueError, KeyError, TypeError):
        return ""
    return kind if isinstance(kind, str) and kind.isidentifier() else ""


class ConnectionFailure(Exception):
    """No whole answer: no connection, a timeout, or a body that ended early."""


class Messages:
    """A pooled, thread-safe client of ``POST /v1/messages``; built once per process."""

    def __init__(self, api_key: str, *, base_url: str | None, timeout: float) -> None:
        self._http = httpx.Client(
            base_url=base_url or API_URL,
            timeout=timeout,
            headers={
                "x-api-key": api_key,
                "anthropic-version": API_VERSION,
                "user-agent": "kenning",
            },
        )

    def create(self, body: dict[str, Any], *, timeout: float | None = None) -> Any:
        """One request, no retry (the caller retries); ``timeout`` replaces the client's."""
        try:
            response = self._http.post(
                "/v1/messages",
                json=body,
                timeout=httpx.USE_CLIENT_DEFAULT if timeout is None else timeout,
            )
        except httpx.TimeoutException as exc:
            raise ConnectionFailure(f"timed out ({type(exc).__name__})") from exc
        except httpx.TransportError as exc:
            raise ConnectionFailure(f"no whole answer ({type(exc).__name__})") from exc
        if response.status_code >= 400:
            raise StatusError(response)
        return response.json()
