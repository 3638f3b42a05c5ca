"""Listing pages agree on one order (kenning/memory/listing.py): memories that tie on the sort
field -- written in one clock tick, as an import's are, never recalled -- are each shown on exactly
one page, in key order within the tie, whichever field and direction the listing sorts by. The
engine sorts by one field and cuts its window anywhere inside a tie; without the key order two
pages could show the same memory and skip another (an import test once paged forever on it)."""

from __future__ import annotations

import pytest

from kenning.engine import Engine
from kenning.memory.listing import SORTABLE, Listing
from kenning.memory.memories import Draft

N = 23
PAGE = 4


def _tied(engine: Engine) -> list[str]:
    """N memories written at one instant (the test clock does not move): every sort field ties."""
    return [
        engine.memories.remember(
            Draft(f"Runbook step {i}: restart worker pool {i} after the deploy", project="tie"),
            actor="t",
            allow_duplicate=True,
        ).key
        for i in range(N)
    ]


def _paged(engine: Engine, sort: str, descending: bool) -> tuple[list[str], set[int]]:
    keys: list[str] = []
    totals: set[int] = set()
    for offset in range(0, N, PAGE):
        listing = Listing(
            projects=["tie"], sort=sort, descending=descending, offset=offset, limit=PAGE
        )
        page = engine.memories.list(listing)
        keys += [m.key for m in page.items]
        totals.add(page.total)
    return keys, totals


@pytest.mark.parametrize("descending", [True, False])
@pytest.mark.parametrize("sort", SORTABLE)
def test_memories_tied_on_the_sort_field_are_each_on_one_page(
    engine: Engine, sort: str, descending: bool
) -> None:
    written = _tied(engine)
    created = {engine.memories.get(k).created_at for k in written}
    assert len(created) == 1  # the positive control: one instant, every memory ties
    keys, totals = _paged(engine, sort, descending)
    assert totals == {N}
    assert keys == sorted(written, reverse=descending)  # each once, in key order
    again, _ = _paged(engine, sort, descending)
    assert again == keys  # and the same order on every read


def test_a_page_still_follows_the_sort_field_before_the_key(engine: Engine) -> None:
    first = engine.memories.remember(Draft("The cache is warmed at boot", project="o"), actor="t")
    engine.ctx.clock.advance(60)  # type: ignore[attr-defined]
    later = [
        engine.memories.remember(Draft(f"Queue {i} drains hourly", project="o"), actor="t").key
        for i in range(3)
    ]
    newest = engine.memories.list(Listing(projects=["o"], limit=2))
    assert [m.key for m in newest.items] == sorted(later, reverse=True)[:2]
    oldest = engine.memories.list(Listing(projects=["o"], limit=2, descending=False))
    assert [m.key for m in oldest.items] == [first.key, min(later)]
