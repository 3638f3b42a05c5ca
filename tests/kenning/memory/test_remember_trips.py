"""A remember's contradiction check sent before the write, in the claim's round trip
(kenning/memory/memories.py, ``Contradictions.before_write``, ``Store.claim_and_search``): it finds
the
others the check after the write finds."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from ulid import ULID

from kenning.core.clock import ManualClock
from kenning.core.models import Memory
from kenning.engine import Engine
from kenning.memory.memories import Draft, WriteRules
from kenning.store import Claimed, Lease
from kenning.truth.contradictions import CANDIDATES
from tests.margins import assert_pair

SEEDS = [
    f"The shop deploy pipeline runs its {kind} {step} stage on the blue cluster"
    for kind in ("first", "second", "nightly", "manual", "optional", "final", "extra", "weekly")
    for step in ("lint", "build", "unit test", "integration test", "packaging", "signing", "upload")
]
NEW = "The shop deploy pipeline runs every stage on the blue cluster"


def _unwritten(engine: Engine, clock: ManualClock) -> Memory:
    now = clock.now()
    return Memory(
        key=engine.store.memories.new_key("knowledge", str(ULID())),
        content=NEW,
        namespace="knowledge",
        project="shop",
        actor="t",
        created_at=now,
        updated_at=now,
        valid_from=now,
    )


def test_the_check_before_the_write_finds_what_the_check_after_it_finds(
    engine: Engine, clock: ManualClock
) -> None:
    threshold = engine.ctx.settings.contradiction_threshold
    # more seeds within the threshold than the check's one search returns
    assert len(SEEDS) > CANDIDATES
    for text in SEEDS:
        assert_pair(engine.ctx.embedder, text, NEW, above=threshold)
        engine.memories.remember(
            Draft(text, project="shop"), actor="t", allow_duplicate=True, check_contradictions=False
        )
    memory, vector = _unwritten(engine, clock), engine.ctx.embedder.embed(NEW)
    lease = engine.store.lease(engine.store.key("claim", "test"), memory.key, 10.0)
    search = engine.memories.duplicate_search("knowledge", "shop", vector)
    claimed = engine.store.claim_and_search(
        lease, search, engine.contradictions.before_write(memory, vector)
    )
    before = engine.contradictions.hits(claimed.nearby)
    engine.memories.write_new(memory, vector, actor="t", action="remember")
    after = engine.contradictions.candidates(memory, vector)
    # the written memory took the nearest row of the search (and is skipped)
    assert len(after) == CANDIDATES - 1
    assert [m.key for m, _ in before] == [m.key for m, _ in after]
    assert [(m.content, m.created_at) for m, _ in before] == [
        (m.content, m.created_at) for m, _ in after
    ]
    assert [s for _, s in before] == pytest.approx([s for _, s in after], abs=1e-4)
    assert {m.content for m, _ in before} < set(SEEDS)


def test_a_remember_opens_the_contradiction_its_early_check_finds(engine: Engine) -> None:
    fly = engine.memories.remember(Draft("We deploy with Fly", project="shop"), actor="t").key
    result = engine.memories.remember(
        Draft("We no longer use Fly; we deploy with Kamal", project="shop"), actor="t"
    )
    (note,) = [n for n in result.notes if n.kind == "contradiction"]
    assert note.other == fly
    # built from the whole rows, not the early ones
    record = engine.contradictions.get(str(note.contradiction))
    assert (record.a, record.b, record.projects) == (fly, result.key, ("shop",))
    assert record.prior[fly] == {"trust": "stated", "valid_to": None, "superseded_by": None}
    assert engine.memories.get(result.key).trust == engine.memories.get(fly).trust == "disputed"


def test_a_context_is_not_checked_so_nothing_is_sent_for_it(
    engine: Engine, clock: ManualClock
) -> None:
    memory, vector = _unwritten(engine, clock), engine.ctx.embedder.embed(NEW)
    # the control: a memory is checked
    assert engine.contradictions.before_write(memory, vector) != []
    context = replace(memory, kind="context")
    assert engine.contradictions.before_write(context, vector) == []


def _checked_early(
    engine: Engine, clock: ManualClock, text: str
) -> tuple[Memory, Any, Lease, Claimed]:
    """A remember of ``text`` up to its early check: the memory (not written), its vector, its
    claim and what the claim's round trip found."""
    now = clock.now()
    memory = Memory(
        key=engine.store.memories.new_key("knowledge", str(ULID())),
        content=text,
        namespace="knowledge",
        project="shop",
        actor="t",
        created_at=now,
        updated_at=now,
        valid_from=now,
    )
    vector = engine.ctx.embedder.embed(text)
    lease = engine.store.lease(engine.store.key("claim", "test", memory.key), memory.key, 10.0)
    search = engine.memories.duplicate_search("knowledge", "shop", vector)
    return (
        memory,
        vector,
        lease,
        engine.store.claim_and_search(
            lease, search, engine.contradictions.before_write(memory, vector)
        ),
    )


def test_two_contradicting_remembers_racing_still_meet(engine: Engine, clock: ManualClock) -> None:
    """Two remembers whose early checks both ran before either wrote: the later writer sees that
    another remember was written since its searches (the write sequence moved by more than its
    own write) and checks again after its write, so the contradiction is found as when the
    check ran after every write."""
    late = _checked_early(engine, clock, "We no longer use Fly; we deploy with Kamal")
    control = _checked_early(engine, clock, "We stopped using Fly; deploys go through Kamal now")
    fly = engine.memories.remember(Draft("We deploy with Fly", project="shop"), actor="t")
    assert fly.status == "stored"
    assert not [n for n in fly.notes if n.kind == "contradiction"]  # neither racer was written yet

    # the control: told that nothing was written since its searches, the
    # early results alone miss Fly
    memory, vector, lease, claimed = control
    now_sequence = engine.store.remembers_written()
    missed = engine.memories._store(
        memory,
        vector,
        actor="t",
        rules=WriteRules(),
        claim=lease,
        nearby=claimed.nearby,
        sequence=now_sequence,
    )
    assert [n.other for n in missed.notes if n.kind == "contradiction"] == []
    assert engine.memories.get(fly.key).trust != "disputed"

    memory, vector, lease, claimed = late
    assert claimed.sequence == now_sequence - 1  # read before Fly was written
    found = engine.memories._store(
        memory,
        vector,
        actor="t",
        rules=WriteRules(),
        claim=lease,
        nearby=claimed.nearby,
        sequence=claimed.sequence,
    )
    assert fly.key in {n.other for n in found.notes if n.kind == "contradiction"}
    assert engine.memories.get(fly.key).trust == "disputed"


def test_each_remember_counts_its_write_once(engine: Engine) -> None:
    before = engine.store.remembers_written()
    engine.memories.remember(
        Draft("The shop's staging runs on two nodes", project="shop"), actor="t"
    )
    engine.memories.remember(
        Draft("The shop's staging runs on two nodes", project="shop"),
        actor="t",
        allow_duplicate=True,
    )  # checked after its write: counted too
    engine.memories.remember(Draft("The shop's CI caches pip wheels", project="shop"), actor="t")
    # a duplicate
    engine.memories.remember(Draft("The shop's CI caches pip wheels", project="shop"), actor="t")
    assert engine.store.remembers_written() == before + 3
