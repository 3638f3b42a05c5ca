"""Concurrent decisions over several memories: exactly one applies, the others get ``Conflict`` and
write nothing (docs/reliability.md, "Decisions").

Each race starts N threads on one engine whose clock is a ``GateClock``: a thread's first reading
of the clock -- which every decision takes after it has read what it decides from and before it
commits -- waits until all N threads have read. So every call decides from the same state, and the
store, not the scheduler, must pick one winner. The clock is the process edge the suite fakes; no
project function is patched.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import valkey

from kenning.core.errors import Conflict
from kenning.core.models import Memory
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.runtime.embedding import Embedder
from kenning.store import Contradiction
from tests.conftest import NOW
from tests.kenning.skill_history import DOMAIN, seed

FLY = "We deploy with Fly"
KAMAL = "We no longer use Fly; we deploy with Kamal"
THREADS = 8


class GateClock:
    """A manual clock whose first reading in each thread, once ``arm``ed for n threads, waits
    until n threads have read it (see the module docstring)."""

    def __init__(self, value: float) -> None:
        self.value = value
        self._lock = threading.Lock()
        self._barrier: threading.Barrier | None = None
        self._seen: set[int] = set()

    def now(self) -> float:
        barrier = self._barrier
        if barrier is not None:
            me = threading.get_ident()
            with self._lock:
                first = me not in self._seen
                self._seen.add(me)
            if first:
                barrier.wait(timeout=120)
        return self.value

    def advance(self, seconds: float) -> None:
        self.value += seconds

    def arm(self, parties: int) -> None:
        self._seen = set()
        self._barrier = threading.Barrier(parties)

    def disarm(self) -> None:
        self._barrier = None


@pytest.fixture
def gate() -> GateClock:
    return GateClock(NOW)


@pytest.fixture
def engine(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, gate: GateClock
) -> Iterator[Engine]:
    opened = Engine.open(settings, client, embedder, clock=gate)
    yield opened
    opened.close()


def race(gate: GateClock, calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls at once from the same reads; each one's result or the Conflict it raised."""
    results: list[Any] = [None] * len(calls)

    def run(n: int) -> None:
        try:
            results[n] = calls[n]()
        except Conflict as exc:
            results[n] = exc

    threads = [threading.Thread(target=run, args=(n,)) for n in range(len(calls))]
    gate.arm(len(calls))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    gate.disarm()
    return results


def winner(results: list[Any]) -> Any:
    """The one result that is not a Conflict (there must be exactly one)."""
    won = [r for r in results if not isinstance(r, Exception)]
    assert len(won) == 1, results
    assert all(isinstance(r, Conflict) for r in results if r is not won[0])
    return won[0]


# --- resolve_contradiction -----------------------------------------------------------------------
DECISIONS = [
    ("keep_a", None, None),
    ("keep_b", None, None),
    ("both_valid", "Fly for staging, Kamal for production", None),
    ("not_a_contradiction", None, None),
    ("merge", None, "We deploy with Kamal; Fly was retired"),
]


def contradiction(engine: Engine, gate: GateClock) -> Contradiction:
    engine.memories.remember(Draft(FLY, project="shop"), actor="agent")
    gate.advance(86_400)
    engine.memories.remember(Draft(KAMAL, project="shop"), actor="agent")
    records, total = engine.contradictions.listing(status="open")
    assert total == 1
    return records[0]


def assert_consistent(engine: Engine, record_id: str) -> Contradiction:
    """Both sides agree with the record's decision."""
    record = engine.contradictions.get(record_id)
    a, b = engine.memories.get(record.a), engine.memories.get(record.b)
    beliefs = {(m.trust, m.superseded_by) for m in (a, b)}
    if record.decision == "keep_a":
        assert (a.trust, b.trust, b.superseded_by) == ("stated", "superseded", a.key)
    elif record.decision == "keep_b":
        assert (b.trust, a.trust, a.superseded_by) == ("stated", "superseded", b.key)
    elif record.decision == "merge":
        assert beliefs == {("superseded", record.merged_key)}
        assert engine.memories.get(record.merged_key).state == "active"
    else:
        assert beliefs == {("stated", None)}
    return record


def resolving(engine: Engine, record_id: str, n: int) -> Callable[[], Contradiction]:
    decision, note, content = DECISIONS[n % len(DECISIONS)]
    return lambda: engine.contradictions.resolve(
        record_id, decision, note, actor=f"reviewer-{n}", content=content
    )


def test_parallel_resolves_of_one_record_apply_exactly_one_decision(
    engine: Engine, gate: GateClock
) -> None:
    record = contradiction(engine, gate)
    decided: list[Contradiction] = []
    for round_ in range(3):  # from open, then changing a resolved record's decision twice
        gate.advance(60)
        results = race(gate, [resolving(engine, record.id, n + round_) for n in range(THREADS)])
        won = winner(results)
        assert isinstance(won, Contradiction)
        for lost in results:
            if lost is not won:  # each loser says what changed under it
                assert f"contradiction {record.id} is now resolved ({won.decision})" in str(lost)
        assert assert_consistent(engine, record.id).decision == won.decision
        decided.append(won)
    # exactly one set of resolve events per round, chained decision to decision
    for key in (record.a, record.b):
        events = [e for e in engine.store.audit.history(key) if e.action == "resolve_contradiction"]
        assert [e.details["decision"] for e in events] == [d.decision for d in decided]
        assert [e.details["previous_decision"] for e in events] == [
            "",
            *(d.decision for d in decided[:-1]),
        ]
    # every merged memory a later decision replaced was retired
    for earlier in decided[:-1]:
        if earlier.merged_key and earlier.merged_key != decided[-1].merged_key:
            assert engine.memories.get(earlier.merged_key).state == "archived"


def test_a_resolve_planned_from_a_stale_side_writes_nothing(
    engine: Engine, gate: GateClock
) -> None:
    """A side verified (or otherwise changed) while the decision was made: the same gate."""
    record = contradiction(engine, gate)
    before = len(engine.store.audit.recent(limit=500))
    results = race(
        gate,
        [
            resolving(engine, record.id, 0),  # keep_a: b superseded
            lambda: engine.memories.contradictions.belief.set_trust(
                record.b, "verified", actor="ana", reason="checked"
            ),
        ],
    )
    if isinstance(results[0], Conflict):  # the trust change won: the resolve wrote nothing
        assert f"{record.b}: trust disputed -> verified" in str(results[0])
        assert engine.contradictions.get(record.id).status == "open"
        assert len(engine.store.audit.recent(limit=500)) == before + 1
    else:  # the resolve won: the trust change (compare-and-set) applied after it, on its result
        assert engine.memories.get(record.b).superseded_by == record.a


# --- merge_duplicates / keep_both ----------------------------------------------------------------
def three(engine: Engine) -> list[Memory]:
    texts = [
        "The staging database is refreshed from production every night",
        "Every night the staging database gets refreshed from production",
        "Staging's database is refreshed nightly from the production one",
    ]
    keys = [
        engine.memories.remember(
            Draft(t, project="ops", tags=(f"t{n}",)), actor="agent", allow_duplicate=True
        ).key
        for n, t in enumerate(texts)
    ]
    return [engine.memories.get(k) for k in keys]


def test_parallel_merges_and_keeps_of_one_cluster_apply_exactly_one(
    engine: Engine, gate: GateClock
) -> None:
    memories = three(engine)
    keys = [m.key for m in memories]

    def merging(n: int) -> Callable[[], Any]:
        keep = keys[n % 3]
        return lambda: engine.duplicates.merge(
            keep, [k for k in keys if k != keep], None, actor=f"r{n}"
        )

    def keeping(n: int) -> Callable[[], Any]:
        return lambda: engine.duplicates.keep_both(keys, "separate jobs", actor=f"r{n}")

    calls = [merging(0), merging(1), merging(2), keeping(3)] * 2
    won = winner(race(gate, calls))
    states = {k: engine.memories.get(k).state for k in keys}
    merges = engine.store.audit.recent(action="merge_duplicates")
    kept = engine.store.audit.recent(action="keep_duplicates")
    archives = engine.store.audit.recent(action="archive")
    if hasattr(won, "archived"):  # a merge won: one memory left active, with every tag
        assert sorted(states.values()) == ["active", "archived", "archived"]
        assert states[won.kept] == "active"
        assert set(engine.memories.get(won.kept).tags) == {"t0", "t1", "t2"}
        assert (len(merges), len(kept), len(archives)) == (1, 0, 2)
    else:  # keep_both won: nothing archived, the decision recorded once
        assert set(states.values()) == {"active"}
        assert (len(merges), len(kept), len(archives)) == (0, 1, 0)


# --- bulk project transitions --------------------------------------------------------------------
def test_parallel_project_actions_apply_once_per_memory(engine: Engine, gate: GateClock) -> None:
    keys = [
        engine.memories.remember(
            Draft(f"race fact number {n}: the {n}th queue drains at {n}00/s", project="race"),
            actor="agent",
            allow_duplicate=True,
        ).key
        for n in range(12)
    ]

    def acting(n: int) -> Callable[[], Any]:
        verb = engine.lifecycle.deprioritise_project if n % 2 else engine.lifecycle.delete_project
        return lambda: verb("race", confirm=True, actor=f"r{n}", reason="sunset")

    results = race(gate, [acting(n) for n in range(6)])
    assert not [r for r in results if isinstance(r, Exception)]
    done = {"deprioritise_project": 0, "delete_project": 0}
    for result in results:
        done[result.action] += result.affected
    # every memory forgotten exactly once (a delete matches every state); the deprioritisations
    # that won their memory before its delete each applied once
    assert done["delete_project"] == len(keys)
    moves = 0
    for key in keys:
        actions = [e.action for e in engine.store.audit.history(key) if e.details.get("bulk")]
        assert actions in (["forget"], ["deprioritise", "forget"]), actions
        assert not engine.store.memories.exists(key)
        moves += len(actions) - 1
    assert moves == done["deprioritise_project"]


def test_parallel_identical_project_moves_move_each_memory_once(
    engine: Engine, gate: GateClock
) -> None:
    keys = [
        engine.memories.remember(
            Draft(f"drain fact {n}: worker {n} drains queue {n}", project="drain"),
            actor="agent",
            allow_duplicate=True,
        ).key
        for n in range(8)
    ]
    results = race(
        gate,
        [
            lambda: engine.lifecycle.deprioritise_project(
                "drain", confirm=True, actor="r", reason="paused"
            )
        ]
        * 4,
    )
    assert sum(r.affected for r in results) == len(keys)
    for key in keys:
        events = [e for e in engine.store.audit.history(key) if e.action == "deprioritise"]
        assert len(events) == 1
        assert engine.memories.get(key).state == "deprioritised"


# --- skill approvals -----------------------------------------------------------------------------
def test_parallel_approvals_and_rejections_of_one_proposal_apply_exactly_one(
    engine: Engine, gate: GateClock
) -> None:
    seed(engine)
    proposal = engine.skills.compile_skill(DOMAIN, actor="agent")

    def deciding(n: int) -> Callable[[], Any]:
        if n % 2:
            return lambda: engine.skills.reject(proposal.id, f"p{n}", "not yet")
        return lambda: engine.skills.approve(proposal.id, proposal.sha, f"p{n}")

    won = winner(race(gate, [deciding(n) for n in range(6)]))
    assert engine.skills.proposal(proposal.id).status == won.status
    approvals = engine.store.audit.recent(action="skill_approve")
    rejections = engine.store.audit.recent(action="skill_reject")
    assert len(approvals) + len(rejections) == 1


# --- the dashboard's multi-select transition ------------------------------------------------------
def selected(engine: Engine, project: str, n: int) -> list[str]:
    return [
        engine.memories.remember(
            Draft(f"{project} note {i}: shard {i} holds the {i}th tenant", project=project),
            actor="agent",
            allow_duplicate=True,
        ).key
        for i in range(n)
    ]


def test_parallel_multi_select_moves_of_one_selection_apply_exactly_one(
    engine: Engine, gate: GateClock
) -> None:
    keys = selected(engine, "pick", 5)
    apart = selected(engine, "apart", 2)  # a selection no other call touches: it applies too

    def moving(n: int) -> Callable[[], Any]:
        to = ("archived", "deprioritised")[n % 2]
        chosen = keys if n % 3 else list(reversed(keys[1:]))  # overlapping selections
        return lambda: engine.lifecycle.transition_many(chosen, to, reason="tidy", actor=f"p{n}")

    apart_move = lambda: engine.lifecycle.transition_many(  # noqa: E731
        apart, "archived", reason="tidy", actor="q"
    )
    results = race(gate, [moving(n) for n in range(6)] + [apart_move])
    assert [t.key for t in results[-1]] == apart
    won = winner(results[:-1])
    for lost in results[:-1]:
        if lost is not won:
            assert "changed meanwhile" in str(lost)
            assert "nothing was changed" in str(lost)
    to = won[0].after
    moved = {t.key for t in won}
    for key in keys:  # the winner's selection all moved; nothing else did
        assert engine.memories.get(key).state == (to if key in moved else "active")
        events = [
            e for e in engine.store.audit.history(key) if e.action in ("archive", "deprioritise")
        ]
        assert [e.actor for e in events] == ([won[0].actor] if key in moved else [])
    assert all(engine.memories.get(k).state == "archived" for k in apart)


def test_a_multi_select_with_one_memory_that_cannot_move_moves_none(engine: Engine) -> None:
    keys = selected(engine, "mixed", 4)
    engine.lifecycle.archive(keys[2], reason="old", actor="p")
    with pytest.raises(Conflict) as refused:
        engine.lifecycle.transition_many(keys, "archived", reason="tidy", actor="p")
    assert f"1 memory of the 4 selected cannot move to archived: {keys[2]} (archived)" in str(
        refused.value
    )
    assert [engine.memories.get(k).state for k in keys] == [
        "active",
        "active",
        "archived",
        "active",
    ]
    # the positive control: the same selection without it moves every one
    rest = [k for k in keys if k != keys[2]]
    assert len(engine.lifecycle.transition_many(rest, "archived", reason="tidy", actor="p")) == 3
    assert {engine.memories.get(k).state for k in keys} == {"archived"}


def test_a_multi_select_decided_from_states_that_changed_moves_none(engine: Engine) -> None:
    keys = selected(engine, "shown", 3)
    shown = dict.fromkeys(keys, "active")  # what the page showed
    engine.lifecycle.deprioritise(keys[0], reason="noisy", actor="ana")  # a move archive allows
    with pytest.raises(Conflict, match=f"changed since you saw them: {keys[0]} .active -> depr"):
        engine.lifecycle.transition_many(keys, "archived", reason="t", actor="p", seen=shown)
    assert [engine.memories.get(k).state for k in keys] == ["deprioritised", "active", "active"]
    # the positive control: decided from the states as they are, every one moves
    now = {k: engine.memories.get(k).state for k in keys}
    engine.lifecycle.transition_many(keys, "archived", reason="t", actor="p", seen=now)
    assert {engine.memories.get(k).state for k in keys} == {"archived"}


# --- project contexts ----------------------------------------------------------------------------
def test_parallel_changes_of_one_project_context_are_each_applied_once_on_the_last(
    engine: Engine, gate: GateClock
) -> None:
    """Not a decision between alternatives: every change is kept, each over the one before it."""
    fields: list[dict[str, Any]] = [
        {"description": "the payments gateway"},
        {"stack": ["go 1.23", "postgres"]},
        {"conventions": "every handler returns a typed error"},
        {"state": "migrating the ledger to the new schema"},
        {"state": "the ledger migration is done; cutting over next week"},
    ]

    def setting(n: int) -> Callable[[], Any]:
        return lambda: engine.projects.set("pay", actor=f"p{n}", **fields[n])

    results = race(gate, [setting(n) for n in range(len(fields))])
    assert sorted(status for _, status in results) == ["created"] + ["updated"] * 4
    final = engine.projects.get("pay")
    assert (final.description, final.stack, final.conventions) == (
        "the payments gateway",
        ("go 1.23", "postgres"),
        "every handler returns a typed error",
    )
    events = engine.store.audit.history(final.key)
    assert [e.action for e in events] == ["project_context"] * len(fields)
    # a chain: each change replaced exactly what the one before it wrote
    assert [e.before for e in events[1:]] == [e.after for e in events[:-1]]
    states = {"p3": fields[3]["state"], "p4": fields[4]["state"]}
    assert final.state == states[[e.actor for e in events if e.actor in states][-1]]
