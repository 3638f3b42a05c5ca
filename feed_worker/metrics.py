"""Prometheus metrics of feed ingestion, on a registry passed in (never the process default).

``kenning up`` passes the MCP server's registry, so /metrics shows them beside the tool metrics.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram

from kenning.knowledge.feeds.ingest import FeedRun

_FETCH_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


class FeedMetrics:
    """Per feed: fetches by outcome (fetched, not_modified, failed), articles by outcome (new,
    duplicate, linked), summaries by state (summary and digest modes) and the fetch latency. Feed
    names come from feeds.yml: a bounded label set."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.fetches = Counter(
            "kenning_feed_fetches",
            "Feed fetches by feed and outcome.",
            ("feed", "outcome"),
            registry=registry,
        )
        self.articles = Counter(
            "kenning_feed_articles",
            "Feed articles by feed and outcome.",
            ("feed", "outcome"),
            registry=registry,
        )
        self.summaries = Counter(
            "kenning_feed_summaries",
            "Memories stored by summary or digest feeds, by "
            "feed and summary state (summarised, no_key, over_budget, failed, "
            "skipped).",
            ("feed", "state"),
            registry=registry,
        )
        self.latency = Histogram(
            "kenning_feed_fetch_seconds",
            "Feed fetch latency (all hops).",
            ("feed",),
            buckets=_FETCH_BUCKETS,
            registry=registry,
        )

    def observe(self, run: FeedRun) -> None:
        """Count one ingest; a run that waited out its backoff fetched nothing: counts nothing."""
        if run.outcome == "waiting":
            return
        self.fetches.labels(run.feed, run.outcome).inc()
        if run.seconds is not None:
            self.latency.labels(run.feed).observe(run.seconds)
        for outcome, count in (
            ("new", len(run.new)),
            ("duplicate", run.duplicates),
            ("linked", len(run.linked)),
        ):
            if count:
                self.articles.labels(run.feed, outcome).inc(count)
        for state, count in run.summaries.items():
            self.summaries.labels(run.feed, state).inc(count)
