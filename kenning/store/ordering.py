"""SORTBY a time a hash may leave out: ``updated_at`` is not written while it equals ``created_at``
(a memory never changed since it was written: schema, issue 38), and both engines sort a document
without the sort field last in either direction. So a search sorted by it runs as two: the
memories that carry the field, sorted by it, and those that do not, sorted by ``created_at`` (the
value it stands for); the two windows are merged here. Pure apart from the searches it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Protocol, TypeVar

from kenning.core import query
from kenning.core.query import Search

IMPLIED = "updated_at"  # the sort field a hash may leave out ...
STANDS_FOR = "created_at"  # ... and the field whose value it then has
HELD = query.numeric(IMPLIED)  # carries the field (any value)


class Ordered(Protocol):
    """What a search returns, as far as merging needs it (``SearchResult``)."""

    @property
    def total(self) -> int: ...

    @property
    def hits(self) -> Sequence[Any]: ...


R = TypeVar("R", bound=Ordered)


def implied(search: Search) -> bool:
    """Whether ``search`` sorts on the field a hash may leave out."""
    return search.sort_by == IMPLIED and search.knn is None


def merged(
    run: Callable[[Search], R], search: Search, key: Callable[[Any], float]
) -> tuple[int, list[Any]]:
    """The total of both searches and the page of their merged hits (``key``: a hit's
    ``updated_at`` as decoded, which is ``created_at`` where the hash left it out)."""
    window = search.offset + search.limit
    fields = search.return_fields
    if fields:  # the merge orders by both times: ask for them
        fields = tuple(dict.fromkeys((*fields, IMPLIED, STANDS_FOR)))
    both = replace(search, offset=0, limit=window, return_fields=fields)
    changed = run(replace(both, clauses=(*search.clauses, HELD)))
    fresh = run(replace(both, clauses=(*search.clauses, "-" + HELD), sort_by=STANDS_FOR))
    hits = sorted([*changed.hits, *fresh.hits], key=key, reverse=search.descending)
    return changed.total + fresh.total, hits[search.offset : window]
