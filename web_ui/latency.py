"""Recall latency from the MCP server's own histogram, read from its ``/metrics``
(docs/dashboard.md#charts).

The dashboard is a process of its own, so it cannot read the MCP server's Prometheus registry; it
scrapes the server's ``/metrics`` (``KENNING_WEB_MCP_METRICS_URL``, else the MCP server's own
address) and reads ``kenning_mcp_tool_latency_seconds`` for the ``recall`` tool: how many recalls
took up to each bucket's bound since that server started. Nothing new is written on the recall path.
When the server does not answer, the chart says so (a degraded state, never a chart of zeros).
"""

from __future__ import annotations

import math
from typing import Any

import httpx
from prometheus_client.parser import text_string_to_metric_families

from kenning.core.settings import Settings

HISTOGRAM = "kenning_mcp_tool_latency_seconds"
TOOL = "recall"
TIMEOUT = 2.0
LIMIT = 2_000_000  # a /metrics page larger than this is not the MCP server's


def metrics_url(settings: Settings) -> str:
    if settings.web_mcp_metrics_url:
        return settings.web_mcp_metrics_url
    host = settings.mcp_host if settings.mcp_host not in ("0.0.0.0", "::", "") else "127.0.0.1"
    return f"http://{f'[{host}]' if ':' in host else host}:{settings.mcp_port}/metrics"


def scrape(url: str) -> dict[str, Any]:
    """The recall histogram at ``url``: ``{"ok": True, "buckets": [(bound, count in it)],
    "count", "sum"}``, or ``{"ok": False, "error": why}`` when the server does not answer
    (blocking: run it off the loop)."""
    try:
        response = httpx.get(url, timeout=TIMEOUT, follow_redirects=False)
    except httpx.HTTPError as exc:
        return {
            "ok": False,
            "url": url,
            "error": (f"the MCP server's metrics at {url} did not answer ({type(exc).__name__})"),
        }
    if response.status_code != 200 or len(response.content) > LIMIT:
        return {
            "ok": False,
            "url": url,
            "error": f"the MCP server's metrics at {url} answered {response.status_code}",
        }
    return {"ok": True, "url": url, **recall_histogram(response.text)}


def recall_histogram(text: str, tool: str = TOOL) -> dict[str, Any]:
    """The per-bucket counts (not cumulative) of ``tool``'s latency histogram in
    a Prometheus page (pure)."""
    cumulative: list[tuple[float, float]] = []
    count = total = 0.0
    for family in text_string_to_metric_families(text):
        if family.name != HISTOGRAM:
            continue
        for sample in family.samples:
            if sample.labels.get("tool") != tool:
                continue
            if sample.name.endswith("_bucket"):
                cumulative.append((float(sample.labels["le"]), sample.value))
            elif sample.name.endswith("_count"):
                count = sample.value
            elif sample.name.endswith("_sum"):
                total = sample.value
    cumulative.sort()
    buckets, below = [], 0.0
    for bound, seen in cumulative:
        buckets.append({"bound": bound, "label": _label(bound), "count": int(seen - below)})
        below = seen
    return {"buckets": buckets, "count": int(count), "sum_seconds": round(total, 6)}


def _label(bound: float) -> str:
    if math.isinf(bound):
        return "slower"
    return f"≤{bound * 1000:g} ms" if bound < 1 else f"≤{bound:g} s"
