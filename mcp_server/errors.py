"""The one translator from engine errors to MCP tool errors.

- ``InvalidInput``: what was wrong and what is allowed (the engine's message and hint).
- ``BackendUnavailable``: memory could NOT be checked; never phrased as "no memories". The caller reads
  the summary (the engine message before its first ": ", e.g. "Valkey is unreachable") and a request
  id; the full text (addresses, paths, driver messages) goes to the server log under that id.
- anything unexpected: masked, logged with a request id the caller can quote.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Container

from fastmcp.exceptions import FastMCPError, ToolError, ValidationError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import ToolResult
from mcp_types import CallToolRequestParams
from pydantic import ValidationError as PydanticValidationError

from kenning.errors import BackendUnavailable, EmbeddingMismatch, KenningError
from mcp_server.metrics import Metrics, tool_label

log = logging.getLogger(__name__)

OUTAGE = "memory could NOT be checked"


def request_id() -> str:
    return uuid.uuid4().hex[:12]


def message(exc: KenningError, request: str | None = None) -> str:
    """The text an agent reads for an engine error: code, message, hint.

    An outage shows only its summary and ``request`` (the id its full text was logged under).
    """
    text = f"{exc.code}: {exc.message}"
    if isinstance(exc, BackendUnavailable | EmbeddingMismatch):
        summary = exc.message.split(": ", 1)[0].rstrip(".")
        text = f"{exc.code}: {OUTAGE} -- {summary}. Do not treat this as 'nothing stored'; retry later " \
            "(a write may have been stored: retry a remember with the same idempotency_key to make it safe)"
        if request:
            text += f" (request id {request})"
    if exc.hint:
        text += f" (hint: {exc.hint})"
    return text


class EngineToolError(ToolError):
    """A translated engine error; ``code`` is the engine's error code (for metrics)."""

    def __init__(self, exc: KenningError, request: str | None = None) -> None:
        super().__init__(message(exc, request))
        self.code = exc.code
        self.outage = isinstance(exc, BackendUnavailable)


def translate(exc: BaseException, tool: str) -> ToolError:
    """Any exception from a tool -> the ToolError the caller sees."""
    if isinstance(exc, BackendUnavailable | EmbeddingMismatch):
        request = request_id()
        log.warning("tool %s: %s: %s (request id %s)", tool, exc.code, exc.message, request)
        return EngineToolError(exc, request)
    if isinstance(exc, KenningError):
        return EngineToolError(exc)
    request = request_id()
    log.error("tool %s failed unexpectedly (request id %s)", tool, request, exc_info=exc)
    return ToolError(f"internal_error: the server failed unexpectedly (request id {request}); "
                     "the details are in the server log")


def _origin(exc: FastMCPError) -> BaseException | None:
    """The exception a tool raised, when FastMCP wrapped it into a generic (masked) ToolError.

    Argument validation errors are already clear ("Missing required argument ...") and pass as they are.
    """
    cause = exc.__cause__
    if isinstance(exc, ValidationError) or isinstance(cause, FastMCPError | PydanticValidationError):
        return None
    return cause


class ErrorTranslator(Middleware):
    def __init__(self, metrics: Metrics, known: Container[str]) -> None:
        self.metrics = metrics
        self.known = known  # the server's tool names, for the metrics label

    async def on_call_tool(self, context: MiddlewareContext[CallToolRequestParams],
                           call_next: CallNext[CallToolRequestParams, ToolResult]) -> ToolResult:
        name = tool_label(context.message.name, self.known)
        try:
            return await call_next(context)
        except KenningError as exc:
            raise self._count(name, exc) from exc
        except EngineToolError as exc:
            self._record(name, exc.code, outage=exc.outage)
            raise
        except FastMCPError as exc:
            origin = _origin(exc)
            if origin is None:  # argument validation and the like: already clear
                code = "invalid_arguments" if isinstance(exc, ValidationError) else "tool_error"
                self.metrics.tool_errors.labels(name, code).inc()
                raise
            raise self._count(name, origin) from origin

    def _count(self, name: str, exc: BaseException) -> ToolError:
        code = exc.code if isinstance(exc, KenningError) else "internal_error"
        self._record(name, code, outage=isinstance(exc, BackendUnavailable))
        return translate(exc, name)

    def _record(self, name: str, code: str, *, outage: bool) -> None:
        self.metrics.tool_errors.labels(name, code).inc()
        if outage:
            self.metrics.valkey_errors.inc()
