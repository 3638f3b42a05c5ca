"""SORTBY a field a hash may leave out: ``updated_at`` is not written while it equals
``created_at`` (a memory never changed since it was written), nor a recall count of 0, nor a
``last_recalled`` never set (schema, issue 38). Both engines sort a document without the sort field
last in either direction on one server, and valkey-search's coordinator on a cluster drops it from
an ascending sort. So a search sorted by such a field runs as two: the memories that carry the
field, sorted by it, and those that do not, sorted by ``created_at``; the two windows are merged
here by the value each hit stands for. Pure apart from the searches it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from kenning.core import query
from kenning.core.query import Search

IMPLIED = ("updated_at", "recall_count", "last_recalled")  # sort fields a hash may leave out
STANDS_FOR = "created_at"  # the order of the memories without the field


class Ordered(Protocol):
    """What a search returns, as far as merging needs it (``SearchResult``)."""

    @property
    def total(self) -> int: ...

    @property
    def hits(self) -> Sequence[Any]: ...


R = TypeVar("R", bound=Ordered)


def implied(search: Search) -> bool:
    """Whether ``search`` sorts on a field a hash may leave out."""
    return search.sort_by in IMPLIED and search.knn is None


def merged(
    run: Callable[[Search], R], search: Search, key: Callable[[Any], float]
) -> tuple[int, list[Any]]:
    """The total of both searches and the page of their merged hits (``key``: a hit's sort value
    as decoded: ``created_at`` for an ``updated_at`` left out, 0 for a count or time left out)."""
    window = search.offset + search.limit
    fields = search.return_fields
    if fields:  # the merge orders by both times: ask for them
        fields = tuple(dict.fromkeys((*fields, search.sort_by or STANDS_FOR, STANDS_FOR)))
    both = replace(search, offset=0, limit=window, return_fields=fields)
    held = query.numeric(search.sort_by or STANDS_FOR)  # carries the field (any value)
    changed = run(replace(both, clauses=(*search.clauses, held)))
    fresh = run(replace(both, clauses=(*search.clauses, "-" + held), sort_by=STANDS_FOR))
    hits = sorted([*changed.hits, *fresh.hits], key=key, reverse=search.descending)
    return changed.total + fresh.total, hits[search.offset : window]
