"""Prometheus metrics of the dashboard, on a registry passed in (never the process default)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST
_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """Requests by route and status, their latency, failed logins and
    Valkey outages seen by a page."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.requests = Counter(
            "kenning_web_requests",
            "Dashboard requests by route and status.",
            ("route", "status"),
            registry=registry,
        )
        self.latency = Histogram(
            "kenning_web_request_latency_seconds",
            "Dashboard request latency.",
            ("route",),
            buckets=_LATENCY_BUCKETS,
            registry=registry,
        )
        self.failed_logins = Counter(
            "kenning_web_failed_logins", "Refused dashboard logins.", registry=registry
        )
        self.valkey_errors = Counter(
            "kenning_web_valkey_errors",
            "Pages that failed because Valkey could not answer.",
            registry=registry,
        )

    def render(self) -> bytes:
        return generate_latest(self.registry)
