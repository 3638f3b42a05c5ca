"""Prometheus metrics of the MCP server, on a registry passed in (never the process default)."""

from __future__ import annotations

import time
from collections.abc import Container

from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from fastmcp.tools.base import ToolResult
from mcp_types import CallToolRequestParams
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST
# the label of a call to a tool that does not exist: callers cannot mint label values
UNKNOWN_TOOL = "unknown"
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """Tool calls, errors and latency per tool; embedding latency; Valkey errors."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.tool_calls = Counter(
            "kenning_mcp_tool_calls",
            "MCP tool calls by tool and outcome.",
            ("tool", "outcome"),
            registry=registry,
        )
        self.tool_errors = Counter(
            "kenning_mcp_tool_errors",
            "MCP tool errors by tool and error code.",
            ("tool", "code"),
            registry=registry,
        )
        self.tool_latency = Histogram(
            "kenning_mcp_tool_latency_seconds",
            "MCP tool call latency.",
            ("tool",),
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self._embedding_and_store(registry)
        self._recall_and_llm(registry)

    def _embedding_and_store(self, registry: CollectorRegistry) -> None:
        self.embedding_latency = Histogram(
            "kenning_embedding_latency_seconds",
            "Time to embed a batch of texts.",
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self.embedding_overloaded = Counter(
            "kenning_embedding_overloaded",
            "Embeddings refused `overloaded` because the embedding queue was at its bound.",
            registry=registry,
        )
        self.valkey_errors = Counter(
            "kenning_valkey_errors",
            "Calls that failed because Valkey could not answer.",
            registry=registry,
        )

    def _recall_and_llm(self, registry: CollectorRegistry) -> None:
        self.llm_calls = Counter(
            "kenning_llm_calls",
            "LLM extra calls by purpose and outcome (ok, failed, late, invalid).",
            ("purpose", "outcome"),
            registry=registry,
        )
        self.expansion_latency = Histogram(
            "kenning_recall_expansion_seconds",
            "Time query expansion added to a "
            "recall, by outcome (used, cached, empty, failed, no_key, over_budget).",
            ("outcome",),
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self.recall_log_failures = Counter(
            "kenning_recall_log_failures",
            "Recall log entries and counter "
            "touches written behind a recall that failed twice and were given "
            "up (the server's log has each).",
            registry=registry,
        )
        self.llm_tokens = Counter(
            "kenning_llm_tokens",
            "Tokens (input + output) the LLM extras spent, by purpose.",
            ("purpose",),
            registry=registry,
        )

    def observe_write_failure(self) -> None:
        """The store's background writer observer (kenning.store.writer.Observer):
        a write given up."""
        self.recall_log_failures.inc()

    def observe_llm(self, purpose: str, outcome: str, tokens: int) -> None:
        """The engine's LLM observer (kenning.llm.client.Observer)."""
        self.llm_calls.labels(purpose, outcome).inc()
        if tokens:
            self.llm_tokens.labels(purpose).inc(tokens)

    def observe_expansion(self, seconds: float, outcome: str) -> None:
        """The engine's query expansion observer (kenning.llm.expansion.Observer)."""
        self.expansion_latency.labels(outcome).observe(seconds)

    def render(self) -> bytes:
        return generate_latest(self.registry)


def tool_label(name: str, known: Container[str]) -> str:
    """The ``tool`` label for a call: its name when the server has that
    tool, else ``UNKNOWN_TOOL``."""
    return name if name in known else UNKNOWN_TOOL


class MetricsMiddleware(Middleware):
    """Outermost tool middleware: counts every call and its outcome, times it.

    ``known`` is the server's tool names (a live view: tools register after
    the middleware is added).
    """

    def __init__(self, metrics: Metrics, known: Container[str]) -> None:
        self.metrics = metrics
        self.known = known

    async def on_call_tool(
        self,
        context: MiddlewareContext[CallToolRequestParams],
        call_next: CallNext[CallToolRequestParams, ToolResult],
    ) -> ToolResult:
        name = tool_label(context.message.name, self.known)
        started = time.perf_counter()
        outcome = "error"
        try:
            result = await call_next(context)
            outcome = "ok"
            return result
        finally:
            self.metrics.tool_calls.labels(name, outcome).inc()
            self.metrics.tool_latency.labels(name).observe(time.perf_counter() - started)
