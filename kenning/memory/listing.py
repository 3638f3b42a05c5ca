"""Listing memories: filters, order and one page (FT.SEARCH over the index, never SCAN)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from kenning.core import query, validation
from kenning.core.errors import InvalidInput
from kenning.core.models import Memory, Page
from kenning.core.schema import FIELD_NAMES
from kenning.memory import fields
from kenning.runtime.context import Context

SORTABLE = ("created_at", "updated_at", "recall_count", "last_recalled")
MAX_OFFSET = 10_000  # each page reads offset+limit rows: deep pages get expensive
MAX_WINDOW = 2 * (MAX_OFFSET + 200)  # the most a page reads to take in a tie at its end


@dataclass(frozen=True)
class Listing:
    """Filters, order and page of a listing (FT.SEARCH, never SCAN)."""

    namespaces: tuple[str, ...] | list[str] | None = None
    projects: tuple[str, ...] | list[str] | None = None
    tags: tuple[str, ...] | list[str] | None = None
    states: tuple[str, ...] | list[str] | None = None
    kinds: tuple[str, ...] | list[str] | None = None
    trusts: tuple[str, ...] | list[str] | None = None
    sort: str = "created_at"
    descending: bool = True
    offset: int = 0
    limit: int = 20


def page(ctx: Context, listing: Listing) -> Page:
    """One page of memories matching the filters, sorted on a NUMERIC field, with the total.

    The page shows live recall counters; sorting by ``recall_count`` / ``last_recalled`` uses
    the values maintenance last folded into the hashes (FT SORTBY), so
    it may lag by one interval.
    """
    if listing.sort not in SORTABLE:
        raise InvalidInput(
            f"cannot sort by {listing.sort!r}", hint=f"use one of {', '.join(SORTABLE)}"
        )
    validation.bounded_int("limit", listing.limit, 1, 200)
    validation.bounded_int("offset", listing.offset, 0, MAX_OFFSET)
    search = query.Search(
        index=ctx.index,
        namespaces=validation.namespaces(listing.namespaces),
        clauses=filter_clauses(listing),
        sort_by=listing.sort,
        descending=listing.descending,
        offset=0,
        limit=listing.offset + listing.limit,
        return_fields=FIELD_NAMES,
    )
    total, items = _window(ctx, listing, search)
    shown = ctx.store.memories.recalls.live(items[listing.offset : listing.offset + listing.limit])
    return Page(items=tuple(shown), total=total, offset=listing.offset, limit=listing.limit)


def _window(ctx: Context, listing: Listing, search: query.Search) -> tuple[int, list[Memory]]:
    """The total and the memories up to the page's end, in one order every page agrees on: the
    sort field, then the key. The engine sorts by one field and cuts its window anywhere among
    memories that tie on it (an import's, written in one clock tick), so two pages could each
    show some of them and skip others; when the window ends inside such a tie it is read again,
    twice as wide, until the tie is whole (up to ``MAX_WINDOW``)."""
    rank = _rank(listing)
    want = listing.offset + listing.limit
    limit = want + 1  # one past the page: whether a tie goes on beyond it
    while True:
        total, items = _read(ctx, listing, replace(search, limit=limit))
        whole = len(items) >= total or len(items) <= want or limit >= MAX_WINDOW
        if whole or rank(items[-1]) != rank(items[want - 1]):
            break
        limit = min(2 * limit, MAX_WINDOW)
    items.sort(key=lambda m: m.key, reverse=listing.descending)
    items.sort(key=rank, reverse=listing.descending)  # stable: ties keep the key order
    return total, items


def _rank(listing: Listing) -> Callable[[Memory], tuple[float, ...]]:
    """The order the engine returns a listing's memories in: its sort field (0 where a hash
    leaves it out); the never recalled, sorted first by their own search, by ``created_at``."""
    if listing.sort == "recall_count" and not listing.descending:
        return lambda m: (float(m.recall_count), 0.0 if m.recall_count else m.created_at)
    return lambda m: (float(getattr(m, listing.sort) or 0.0),)


def _read(ctx: Context, listing: Listing, search: query.Search) -> tuple[int, list[Memory]]:
    if listing.sort == "recall_count" and not listing.descending:
        return _fewest_recalls_first(ctx, search)
    result = ctx.store.memories.search(search)
    return result.total, [h.memory for h in result.hits]


def _fewest_recalls_first(ctx: Context, search: query.Search) -> tuple[int, list[Memory]]:
    """Ascending by recall count: a count of 0 is left out of the hash (schema), and both engines
    sort a document without the field last either way, so the never recalled come first from a
    search of their own (a stored 0 of an older layout included), then the others."""
    never = replace(search, clauses=(*search.clauses, "-" + query.numeric("recall_count", 1)))
    first = ctx.store.memories.search(replace(never, sort_by="created_at"))
    rest = ctx.store.memories.search(
        replace(
            search,
            clauses=(*search.clauses, query.numeric("recall_count", 1)),
            limit=max(search.limit - len(first.hits), 0),
        )
    )
    items = [h.memory for h in first.hits] + [h.memory for h in rest.hits]
    return first.total + rest.total, items


def filter_clauses(listing: Listing) -> tuple[str, ...]:
    clauses: list[str] = []
    if listing.projects:
        clauses.append(query.tag("project", validation.projects(listing.projects)))
    if listing.tags:
        clauses.append(query.tag("tags", validation.tags(list(listing.tags))))
    if listing.states:
        clauses.append(query.tag("state", [fields.state(s) for s in listing.states]))
    if listing.kinds:
        clauses.append(query.tag("kind", [fields.kind(k) for k in listing.kinds]))
    if listing.trusts:
        clauses.append(query.tag("trust", [fields.trust(t) for t in listing.trusts]))
    return tuple(clauses)
