"""The import's duplicate decision: the same on either engine (kenning/memory/dedup.py).

The suite runs on both engines; the fixed import below has its duplicates decided by construction
(verbatim repeats of the store and of earlier lines, across batches, and identical texts of
several events, whose tie only the event date decides), so both runs must give this same set.
"""

from __future__ import annotations

import numpy as np

from kenning.core.models import Memory
from kenning.engine import Engine
from kenning.memory import dedup
from kenning.memory.bulk import NEW, Bulk
from kenning.memory.memories import Draft

PROJECT = "dedup-fixed"
STAGING = "The atlas-api staging database is postgres 15 on port 5433."
RELEASES = "Releases of atlas-api are cut on Thursdays after the standup."
DEPLOY = "Deploy atlas-api with `fly deploy` after CI is green."
NUMPY = "Pin numpy==1.26.4 in atlas-api: the 2.x ABI breaks our extension."
NUMPY_NEXT = "Pin numpy==1.26.5 in atlas-api: the 2.x ABI breaks our extension."
FILLERS = (
    "The atlas-api on-call rota lives in the team wiki under Operations.",
    "Use ruff format before committing to atlas-api.",
    "atlas-api logs go to Loki with a 14 day retention.",
)
JANUARY, MARCH, JUNE = "2026-01-10", "2026-03-10", "2026-06-01"


def _draft(content: str, event_date: str | None = None) -> Draft:
    return Draft(content, project=PROJECT, event_date=event_date)


# line -> what it repeats: ("store", name of the stored memory) or ("line", earlier line)
IMPORT: list[tuple[Draft, tuple[str, str | int] | None]] = [
    (_draft(DEPLOY), None),  # 0
    (_draft(RELEASES), ("store", "releases")),  # 1
    (_draft(STAGING, MARCH), ("store", "staging-march")),  # 2: ties with January; the date decides
    (_draft(STAGING, JANUARY), ("store", "staging-january")),  # 3
    (_draft(NUMPY), None),  # 4
    (_draft(NUMPY_NEXT), None),  # 5: another version is an update, not a repeat
    (_draft(FILLERS[0]), None),  # 6
    (_draft(FILLERS[1]), None),  # 7
    (_draft(FILLERS[2]), None),  # 8
    (_draft(NUMPY), ("line", 4)),  # 9: a later batch repeats line 4
    (_draft(DEPLOY), ("line", 0)),  # 10
    (_draft(STAGING, JUNE), None),  # 11: the same text, a third event
    (_draft(STAGING, JUNE), ("line", 11)),  # 12: three identical vectors; the date decides
]


def _seed(engine: Engine) -> dict[str, str]:
    """The memories the store holds before the import: name -> key."""
    seeded = {
        "releases": _draft(RELEASES),
        "staging-january": _draft(STAGING, JANUARY),
        "staging-march": _draft(STAGING, MARCH),
    }
    keys = {}
    for name, draft in seeded.items():
        result = engine.memories.remember(draft, actor="tester")
        assert result.status == "stored", (name, result)
        keys[name] = result.key
    return keys


def test_a_fixed_import_gives_the_duplicates_its_lines_repeat(engine: Engine) -> None:
    stored = _seed(engine)
    bulk = Bulk(engine.ctx, engine.memories)
    drafts = [draft for draft, _ in IMPORT]
    # batches of 4: lines 9, 10 and 12 repeat lines of earlier batches
    planned = bulk.plan_many(drafts, actor="importer", batch=4)
    results = bulk.remember_many(drafts, actor="importer", batch=4)
    for run, new in ((planned, NEW), (results, "stored")):
        expected: list[tuple[str, str | None]] = []
        for _, repeated in IMPORT:
            if repeated is None:
                expected.append((new, None))
                continue
            kind, what = repeated
            key = stored[str(what)] if kind == "store" else run[int(what)].key
            expected.append(("duplicate", key))
        got = [(r.status, r.key if r.status == "duplicate" else None) for r in run]
        assert got == expected
    # the positive control beside the exclusions: every line decided new was written
    for line, result in enumerate(results):
        if IMPORT[line][1] is None:
            assert engine.memories.get(result.key).content == IMPORT[line][0].content


def _memory(key: str, content: str, event_date: float | None = None) -> Memory:
    return Memory(key=key, content=content, namespace="knowledge", event_date=event_date)


def test_duplicate_of_takes_the_nearest_that_repeats_ties_by_key() -> None:
    line = _memory("k:new", STAGING, event_date=2_000_000.0)
    other_day = _memory("k:1", STAGING, event_date=1_000_000.0)
    same_day = _memory("k:2", STAGING, event_date=2_000_000.0)
    same_too = _memory("k:3", STAGING, event_date=2_000_000.0)
    # the nearest does not repeat it (another event): the next one that does wins
    assert dedup.duplicate_of(line, [(other_day, 1.0), (same_day, 1.0)], 0.92) == (same_day, 1.0)
    # equal similarity: the smaller key, in whatever order the engine returned them
    for order in ([same_too, same_day], [same_day, same_too]):
        assert dedup.duplicate_of(line, [(m, 0.97) for m in order], 0.92) == (same_day, 0.97)
    # within 1e-4 is a tie too: a stored copy's vector is spread for its key (~1e-6 from the
    # model's, kenning.store.vectors) while an earlier line's is the model's own (1.0)
    near = [(same_too, 1.0), (same_day, 1.0 - 2e-6)]
    assert dedup.duplicate_of(line, near, 0.92) == (same_day, 1.0 - 2e-6)
    # a nearer candidate wins over a smaller key
    assert dedup.duplicate_of(line, [(same_day, 0.95), (same_too, 0.99)], 0.92) == (same_too, 0.99)
    # below the threshold is never a duplicate; at it is (positive control)
    assert dedup.duplicate_of(line, [(same_day, 0.90)], 0.92) is None
    assert dedup.duplicate_of(line, [(same_day, 0.92)], 0.92) == (same_day, 0.92)
    # named twice, the last similarity holds (the import's own, after the engine's)
    assert dedup.duplicate_of(line, [(same_day, 0.99), (same_day, 0.90)], 0.92) is None


def test_kept_finds_every_earlier_line_at_the_threshold() -> None:
    kept = dedup.Kept()
    rows = np.eye(4, dtype=np.float32)
    for i in range(3):
        kept.add(_memory(f"k:{i}", f"text {i}"), rows[i])
    near = kept.near([_memory("k:a", "a"), _memory("k:b", "b")], rows[[0, 3]], 0.92)
    assert [[m.key for m, _ in found] for found in near] == [["k:0"], []]
