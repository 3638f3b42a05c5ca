"""Timing from the outside: wrappers around the embedder and the memory store's search.

The engine is built with these in place of the real objects, so recall's time splits into embedding,
FT.SEARCH and the rest (re-scoring, filters, logging) without a single timing line in kenning/. Each
wrapper adds one perf_counter pair per call. Times are kept per thread, so concurrent
clients do not mix their splits.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from kenning.core.query import Search
from kenning.runtime.embedding import Embedder, Vector
from kenning.store import Batch, MemoryStore, Near, SearchResult


class Stopwatch:
    """Seconds spent per phase on the current thread since the last ``reset``."""

    def __init__(self) -> None:
        self._local = threading.local()

    def reset(self) -> None:
        self._local.phases = {}

    def add(self, phase: str, seconds: float) -> None:
        phases: dict[str, float] | None = getattr(self._local, "phases", None)
        if phases is None:
            phases = self._local.phases = {}
        phases[phase] = phases.get(phase, 0.0) + seconds

    def phases(self) -> dict[str, float]:
        return dict(getattr(self._local, "phases", {}))


class TimedEmbedder:
    """An ``Embedder`` that records the time of every call under 'embed'."""

    def __init__(self, inner: Embedder, watch: Stopwatch) -> None:
        self.inner = inner
        self.watch = watch
        self.model_name = inner.model_name
        self.dimension = inner.dimension

    def embed(self, text: str) -> Vector:
        start = time.perf_counter()
        try:
            return self.inner.embed(text)
        finally:
            self.watch.add("embed", time.perf_counter() - start)

    def embed_many(self, texts: list[str]) -> list[Vector]:
        start = time.perf_counter()
        try:
            return self.inner.embed_many(texts)
        finally:
            self.watch.add("embed", time.perf_counter() - start)


class TimedMemoryStore(MemoryStore):
    """The memory store with every FT.SEARCH timed under 'search'."""

    def __init__(self, inner: MemoryStore, watch: Stopwatch) -> None:
        super().__init__(inner.client, inner.prefix, recalls=inner.recalls, units=inner.units)
        self.watch = watch

    def search(self, query: Search) -> SearchResult:
        with self._searching(1):
            return super().search(query)

    def search_many(self, queries: Sequence[Search]) -> list[SearchResult]:
        """Pipelined searches: one round trip, every FT.SEARCH in it counted."""
        with self._searching(len(queries)):
            return super().search_many(queries)

    def nearest(self, wanted: Sequence[Near]) -> list[SearchResult]:
        """Slim KNNs, then the read of the rows kept: both round trips count as search."""
        with self._searching(len(wanted)):
            return super().nearest(wanted)

    def batch(self, wanted: Sequence[Near]) -> Batch:
        """Searches sent in a caller's pipeline (a remember's claim): from their queueing to the
        end of their answer, so the round trip they share with the claim and the
        suppression list counts as search."""
        return TimedBatch(self, wanted)

    @contextmanager
    def _searching(self, calls: int) -> Iterator[None]:
        """The time of the block under 'search', and its FT.SEARCH count under 'search_calls'."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.watch.add("search", time.perf_counter() - start)
            self.watch.add("search_calls", float(calls))


class TimedBatch(Batch):
    def __init__(self, store: TimedMemoryStore, wanted: Sequence[Near]) -> None:
        super().__init__(
            store.client, wanted, exact=store.exact_mode(), unreachable=store.unreachable
        )
        self.watch = store.watch
        self.start = 0.0

    def queue(self, pipe: Any) -> None:
        self.start = time.perf_counter()
        super().queue(pipe)

    def finish(self, replies: Sequence[Any]) -> list[SearchResult]:
        try:
            return super().finish(replies)
        finally:
            self.watch.add("search", time.perf_counter() - self.start)
            self.watch.add("search_calls", float(len(self.wanted)))


def timed(fn: Any, watch: Stopwatch, *args: Any, **kwargs: Any) -> tuple[Any, dict[str, float]]:
    """Call ``fn`` and return its result with the phase split (embed,
    search, rest, total) in seconds."""
    watch.reset()
    start = time.perf_counter()
    result = fn(*args, **kwargs)
    total = time.perf_counter() - start
    phases = watch.phases()
    phases["total"] = total
    phases["rest"] = max(0.0, total - phases.get("embed", 0.0) - phases.get("search", 0.0))
    return result, phases
