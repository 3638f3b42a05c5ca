"""What a search over the memories answers: its rows (``Hit``), the whole result
(``SearchResult``), and a KNN read only within a distance (``Near``; ``MemoryStore.nearest``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kenning.core.models import Memory
from kenning.core.query import Search


@dataclass(frozen=True)
class Hit:
    """One search result row: the memory and its KNN distance (None for filter-only queries)."""

    memory: Memory
    distance: float | None

    @property
    def similarity(self) -> float:
        return 1.0 - self.distance if self.distance is not None else 0.0


@dataclass(frozen=True)
class Near:
    """A KNN whose rows are read only when within ``max_distance`` and accepted by
    ``accept(fields)``, where the fields are the distance and ``fields`` (see
    ``MemoryStore.nearest``)."""

    search: Search
    max_distance: float | None = None
    fields: tuple[str, ...] = ()
    accept: Callable[[dict[str, str]], bool] | None = None
    # keys never kept (e.g. the memory being checked against the others)
    skip: frozenset[str] = frozenset()


@dataclass(frozen=True)
class SearchResult:
    total: int
    hits: tuple[Hit, ...]
    phantoms: int = 0  # index entries whose hash was gone
    # ``nearest``: the distance of every row its KNN returned (kept or not), nearest first -- the
    # spread a recall's confidence reads (kenning.memory.confidence)
    distances: tuple[float, ...] = ()
