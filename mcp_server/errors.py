"""The one translator from engine errors to MCP tool errors.

- ``InvalidInput``: what was wrong and what is allowed (the engine's message and hint).
- ``BackendUnavailable``: memory could NOT be checked; never phrased as "no memories". The caller
  reads the summary (the engine message before its first ": ", e.g. "Valkey is unreachable") and a
  request id; the full text (addresses, paths, driver messages) goes to the
  server log under that id.
- anything unexpected: masked, logged with a request id the caller can quote.
- arguments the schema refuses (pydantic): ``invalid_arguments: <field>: <what> (hint: ...)``, the
  same shape as the engine's errors.

An expected error (the caller's input, a missing key, a refused scope) is one INFO line with its
code, never FastMCP's "Error calling tool" at ERROR: it is the tool working as documented.
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

from kenning.core.errors import BackendUnavailable, EmbeddingMismatch, KenningError
from mcp_server.metrics import Metrics, tool_label

log = logging.getLogger(__name__)

OUTAGE = "memory could NOT be checked"


class FastMcpEchoes(logging.Filter):
    """Drops FastMCP's own lines about a failed tool call: ``ErrorTranslator`` logs each failure
    once, in Kenning's words (INFO with its code, or a request id and the
    traceback for an unexpected one)."""

    ECHOES = ("Invalid arguments for tool", "Error calling tool")

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.ECHOES)


def quiet_fastmcp_echoes() -> None:
    """Install the filter on FastMCP's server logger (once per process; a
    second call changes nothing)."""
    logger = logging.getLogger("fastmcp.server.server")
    if not any(isinstance(f, FastMcpEchoes) for f in logger.filters):
        logger.addFilter(FastMcpEchoes())


def request_id() -> str:
    return uuid.uuid4().hex[:12]


def message(exc: KenningError, request: str | None = None) -> str:
    """The text an agent reads for an engine error: code, message, hint.

    An outage shows only its summary and ``request`` (the id its full text was logged under).
    """
    text = f"{exc.code}: {exc.message}"
    if isinstance(exc, BackendUnavailable | EmbeddingMismatch):
        summary = exc.message.split(": ", 1)[0].rstrip(".")
        text = (
            f"{exc.code}: {OUTAGE} -- {summary}. Do not treat this as "
            "'nothing stored'; retry later "
            "(a write may have been stored: retry a remember with the same "
            "idempotency_key to make it safe)"
        )
        if request:
            text += f" (request id {request})"
    if exc.hint:
        text += f" (hint: {exc.hint})"
    return text


class EngineToolError(ToolError):
    """A translated engine error; ``code`` is the engine's error code (for metrics).

    FastMCP logs a raised ToolError at its ``log_level``: DEBUG here, because ``translate`` already
    logged it once in Kenning's words (INFO, or WARNING for an outage).
    """

    def __init__(
        self,
        exc: KenningError | None,
        request: str | None = None,
        *,
        code: str = "",
        text: str = "",
    ) -> None:
        super().__init__(
            message(exc, request) if exc is not None else text, log_level=logging.DEBUG
        )
        self.code = exc.code if exc is not None else code
        self.outage = isinstance(exc, BackendUnavailable)


def invalid_arguments(tool: str, exc: PydanticValidationError) -> EngineToolError:
    """Arguments the tool's schema refused, in the engine's ``code: message (hint: ...)`` shape."""
    errors = exc.errors(include_url=False, include_input=False)
    where = ["/".join(str(p) for p in e["loc"]) or "arguments" for e in errors]
    problems = "; ".join(f"{field}: {e['msg']}" for field, e in zip(where, errors, strict=True))
    # The log names the fields and pydantic's error types only: a message may
    # quote the caller's input.
    log.info(
        "tool %s: invalid_arguments: %s",
        tool,
        ", ".join(f"{f} ({e['type']})" for f, e in zip(where, errors, strict=True)),
    )
    return EngineToolError(
        None,
        code="invalid_arguments",
        text=(
            f"invalid_arguments: {problems} (hint: tools/list gives each parameter's type, "
            "bounds and allowed values; nothing was changed)"
        ),
    )


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
    return ToolError(
        f"internal_error: the server failed unexpectedly (request id {request}); "
        "the details are in the server log"
    )


def _origin(exc: FastMCPError) -> BaseException | None:
    """The exception a tool raised, when FastMCP wrapped it into a generic (masked) ToolError.

    Argument validation errors are already clear ("Missing required argument
    ...") and pass as they are.
    """
    cause = exc.__cause__
    if isinstance(exc, ValidationError) or isinstance(
        cause, FastMCPError | PydanticValidationError
    ):
        return None
    return cause


class ErrorTranslator(Middleware):
    def __init__(self, metrics: Metrics, known: Container[str]) -> None:
        self.metrics = metrics
        self.known = known  # the server's tool names, for the metrics label

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        name = tool_label(context.message.name, self.known)
        try:
            return await call_next(context)
        except KenningError as exc:
            error = self._count(name, exc)
            if not isinstance(exc, BackendUnavailable | EmbeddingMismatch):
                log.info("tool %s: %s", name, error)
            raise error from exc
        except EngineToolError as exc:
            self._record(name, exc.code, outage=exc.outage)
            if not exc.outage:  # an outage was logged at WARNING with its request id
                log.info("tool %s: %s", name, exc)
            raise
        except FastMCPError as exc:
            if isinstance(exc.__cause__, PydanticValidationError) and isinstance(
                exc, ValidationError
            ):
                self.metrics.tool_errors.labels(name, "invalid_arguments").inc()
                raise invalid_arguments(name, exc.__cause__) from exc
            origin = _origin(exc)
            if origin is None:  # FastMCP's own wording, already clear
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
