"""Listing memories: filters, order and one page (FT.SEARCH over the index, never SCAN)."""

from __future__ import annotations

from dataclasses import dataclass, replace

from kenning.core import query, validation
from kenning.core.errors import InvalidInput
from kenning.core.models import Memory, Page
from kenning.core.schema import FIELD_NAMES
from kenning.memory import fields
from kenning.runtime.context import Context

SORTABLE = ("created_at", "updated_at", "recall_count", "last_recalled")
MAX_OFFSET = 10_000  # each page reads offset+limit rows: deep pages get expensive


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
    if listing.sort == "recall_count" and not listing.descending:
        total, items = _fewest_recalls_first(ctx, search)
    else:
        result = ctx.store.memories.search(search)
        total, items = result.total, [h.memory for h in result.hits]
    items.sort(key=lambda m: getattr(m, listing.sort) or 0.0, reverse=listing.descending)
    shown = ctx.store.memories.recalls.live(items[listing.offset : listing.offset + listing.limit])
    return Page(items=tuple(shown), total=total, offset=listing.offset, limit=listing.limit)


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
