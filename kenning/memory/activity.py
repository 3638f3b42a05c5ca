"""What happened per UTC day, for the dashboard's charts (docs/dashboard.md#charts).

Every number is a count the store answers directly, in one round trip per chart: memories created
per day and namespace, and feed articles per day, are FT.SEARCH counts (``LIMIT 0 0``) over
``created_at`` windows -- the one form both RediSearch and valkey-search 1.2 serve (their
FT.AGGREGATE subsets differ); contradictions detected and resolved per day are ZCOUNTs over the
contradiction indexes. Memories forgotten since are not counted: they are gone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from kenning.core import query, validation
from kenning.runtime.context import Context

DAY = 86_400
MAX_DAYS = 90
FEED_KIND = (
    "article"  # what the feed ingest stores each entry as (kenning/knowledge/feeds/ingest.py)
)


@dataclass(frozen=True)
class Day:
    label: str  # YYYY-MM-DD (UTC)
    start: float
    end: float


def days_until(now: float, count: int) -> list[Day]:
    """The ``count`` UTC days ending with today, oldest first (pure)."""
    midnight = (
        datetime.fromtimestamp(now, tz=UTC)
        .replace(hour=0, minute=0, second=0, microsecond=0)
        .timestamp()
    )
    starts = [midnight - (count - 1 - i) * DAY for i in range(count)]
    return [Day(datetime.fromtimestamp(s, tz=UTC).strftime("%Y-%m-%d"), s, s + DAY) for s in starts]


@dataclass(frozen=True, slots=True)
class PerDay:
    """A chart's counts: ``series[name][i]`` is the count of ``days[i]`` (YYYY-MM-DD, UTC)."""

    days: list[str]
    series: dict[str, list[int]]


class Activity:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.contradictions = ctx.store.contradictions

    def days(self, count: int) -> list[Day]:
        validation.bounded_int("days", count, 1, MAX_DAYS)
        return days_until(self.ctx.clock.now(), count)

    def memories_created(self, count: int = 14) -> PerDay:
        """Memories (still stored) created each day, per namespace."""
        days = self.days(count)
        namespaces = validation.namespaces(None)
        searches = [self._created(ns, day) for ns in namespaces for day in days]
        totals = [r.total for r in self.ctx.store.memories.search_many(searches)]
        series = {
            ns: totals[i * len(days) : (i + 1) * len(days)] for i, ns in enumerate(namespaces)
        }
        return PerDay([d.label for d in days], series)

    def feed_articles(self, count: int = 14) -> PerDay:
        """Feed articles stored each day (knowledge memories of kind ``article``)."""
        days = self.days(count)
        searches = [self._created("knowledge", day, query.tag("kind", [FEED_KIND])) for day in days]
        totals = [r.total for r in self.ctx.store.memories.search_many(searches)]
        return PerDay([d.label for d in days], {"articles": totals})

    def contradictions_per_day(self, count: int = 14) -> PerDay:
        """Contradictions detected (opened) and resolved each day."""
        days = self.days(count)
        windows = [(d.start, d.end) for d in days]
        return PerDay(
            [d.label for d in days],
            {
                "opened": self.contradictions.per_window(windows, resolved=False),
                "resolved": self.contradictions.per_window(windows, resolved=True),
            },
        )

    def _created(self, namespace: str, day: Day, *extra: str) -> query.Search:
        window = query.numeric("created_at", day.start, day.end, exclusive_high=True)
        return query.Search(
            index=self.ctx.index, namespaces=(namespace,), clauses=(*extra, window), limit=0
        )
