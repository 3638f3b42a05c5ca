"""Valkey Cluster safety of the code as it runs: every atomic unit the engine
sends stays in one hash slot.

A scenario drives the engine through its write and read paths (remember, bulk import, recall, edits,
experience and the graveyard's phrase index, suppression, forgetting, maintenance, skills, tokens,
accounts, sessions, login throttling, the worker lease) on a client that records every command. Each
MULTI/EXEC block, script call and multi-key command is checked against the cluster rule
(tests/kenning/cluster_rules.py). A new atomic group anywhere is checked by the same rule without
naming its call site. The one known exception is the unit of work (kenning/store/unit.py): a write
and its audit events in one script, atomic on the single server Kenning runs on, over keys in
several slots; the cluster layout splits it by slot (kenning/store/cluster_unit.py), and the
same scenario on that layout keeps every group, each piece of a unit included, in one slot.
Positive controls: the scenario's groups include multi-key ones, the one-server unit is caught
spanning slots, and a deliberately cross-slot transaction and script are caught.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import valkey

from kenning.access.accounts import Accounts
from kenning.access.sessions import Sessions
from kenning.core.clock import ManualClock
from kenning.core.errors import PermissionDenied
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.bulk import Bulk
from kenning.memory.experience import Approach
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.runtime.embedding import Embedder
from kenning.store import Store, connect
from kenning.store.cluster_unit import PIECE_SCRIPT
from kenning.store.unit import UNIT_SCRIPT
from tests.kenning.cluster_rules import Group, KeysOf, Recorder, atomic_groups, cross_slot
from tests.kenning.skill_history import DOMAIN, seed

PASSWORD = "correct horse battery staple"
# the recorder wires a one-server client (it computes the slots): not a cluster client's pass
pytestmark = pytest.mark.single_server


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def recording(
    settings: Settings, client: valkey.Valkey, recorder: Recorder
) -> Iterator[valkey.Valkey]:
    """A second client on the test's prefix whose commands are recorded
    (``client`` wipes the prefix after)."""
    wired = recorder.wire(connect(settings))
    yield wired
    wired.close()  # type: ignore[no-untyped-call]


def scenario(engine: Engine, clock: ManualClock) -> None:
    """The engine's paths, as agents, the dashboard and the worker use them."""
    memories = engine.memories
    memories.remember(
        Draft(
            "The orders service connects to Postgres on port 5432.",
            namespace="project",
            project="alpha",
        ),
        actor="agent",
    )
    memories.remember(
        Draft(
            "The orders service connects to Postgres on port 5433 now.",
            namespace="project",
            project="alpha",
        ),
        actor="agent",
    )
    note = memories.remember(
        Draft("Ran the nightly import by hand after the cron job failed.", project="alpha"),
        actor="agent",
    ).key
    Bulk(engine.ctx, memories).remember_many(
        [
            Draft(f"Bulk note {i}: the {name} importer retries three times.", project="beta")
            for i, name in enumerate(("invoice", "payout", "refund", "ledger"))
        ],
        actor="import",
    )
    for text in ("which port does Postgres use for orders?", "importer retries", "nightly import"):
        engine.recaller.recall(
            RecallRequest(text, projects=["alpha", "beta"], top_k=5, actor="agent")
        )
    memories.update(
        note,
        "Ran the nightly import by hand twice after the cron job failed.",
        actor="agent",
        reason="it happened again",
    )
    memories.retag(note, add=["ops"], actor="agent")
    engine.belief.verify(note, "seen in the cron log", actor="ana")
    engine.experience.log_abandoned(
        Approach("Celery beat", "library", "too heavy for one job"),
        effort=3,
        project="alpha",
        actor="agent",
    )
    engine.recaller.recall(
        RecallRequest("should we schedule it with celery beat?", projects=["alpha"], actor="agent")
    )
    engine.suppressions.suppress("nightly import", "a retired job", actor="ana")
    engine.suppressions.unsuppress("nightly import", actor="ana")
    memories.forget(note, confirm=True, actor="ana", reason="no longer useful")
    engine.maintenance.run()
    _skills(engine)
    _identities(engine, clock)


def _skills(engine: Engine) -> None:
    seed(engine)
    proposal = engine.skills.compile_skill(DOMAIN, actor="agent")
    engine.skills.approve(proposal.id, proposal.sha, "ana")
    engine.skills.write(proposal.id, actor="agent")


def _identities(engine: Engine, clock: ManualClock) -> None:
    _, secret = engine.tokens.create("laptop", "write", actor="ana")
    assert engine.tokens.verify(secret) is not None
    engine.tokens.revoke("laptop", actor="ana")
    accounts = Accounts(engine.store, clock)
    accounts.create("alice", PASSWORD, "editor")
    with pytest.raises(PermissionDenied):
        # counted by the login throttle
        accounts.authenticate("alice", PASSWORD + "!", ip="10.0.0.1")
    sessions = Sessions(engine.store, clock, accounts)
    session_id, _ = sessions.create("alice", ttl_seconds=600)
    sessions.destroy(session_id)
    lease = engine.jobs.lease("worker-1")
    assert lease.hold()
    assert lease.hold()  # the renewal script
    assert lease.release()


# Valkey's script id
UNIT_SHA = hashlib.sha1(UNIT_SCRIPT.encode(), usedforsecurity=False).hexdigest()
PIECE_SHA = hashlib.sha1(PIECE_SCRIPT.encode(), usedforsecurity=False).hexdigest()


@pytest.fixture
def run_scenario(
    settings: Settings,
    recording: valkey.Valkey,
    client: valkey.Valkey,
    recorder: Recorder,
    embedder: Embedder,
    clock: ManualClock,
) -> Callable[[bool], list[Group]]:
    """The scenario on the one-server layout or the cluster layout (kenning/store/cluster_unit.py),
    recorded on the one server (slots are computed, not asked of a cluster): its atomic groups."""

    def run(cluster: bool) -> list[Group]:
        store = Store(recording, settings.key_prefix, cluster=cluster)
        engine = Engine.open(settings, store, embedder, clock=clock)
        scenario(engine, clock)
        engine.close()
        assert len(recorder.sent) > 200
        return atomic_groups(recorder.sent, KeysOf(client))

    return run


@pytest.fixture
def scenario_groups(run_scenario: Callable[[bool], list[Group]]) -> list[Group]:
    return run_scenario(False)


@pytest.fixture
def cluster_groups(run_scenario: Callable[[bool], list[Group]]) -> list[Group]:
    return run_scenario(True)


def test_every_atomic_group_the_engine_sends_stays_in_one_slot(
    scenario_groups: list[Group],
) -> None:
    """The rule for every atomic group but the unit of work's script (the
    one known exception, below)."""
    units = [g for g in scenario_groups if g.script == UNIT_SHA]
    others = [g for g in scenario_groups if g.script != UNIT_SHA]
    kinds = {g.kind for g in others}
    # positive controls: the scenario reached transactions and scripts beside the units, and the
    # recorder reads every key of a multi-key script (the units name several;
    # test_a_cross_slot_... shows the rule bites)
    assert {"MULTI", "EVAL"} <= kinds, kinds
    assert len(units) > 30
    assert any(len(set(g.keys)) > 2 for g in units)
    assert cross_slot(others) == [], _describe(cross_slot(others))


def test_the_unit_of_work_stays_in_one_slot_on_the_cluster_layout(
    cluster_groups: list[Group],
) -> None:
    """Every group the cluster layout sends -- each piece of a split unit of work included --
    names keys of one slot; on one server the unit stays one script over several slots."""
    pieces = [g for g in cluster_groups if g.script == PIECE_SHA]
    assert len(pieces) > 60  # positive control: the scenario wrote through split units
    assert any(len(set(g.keys)) > 2 for g in pieces)  # pieces with several keys of one slot
    assert not [g for g in cluster_groups if g.script == UNIT_SHA]
    assert cross_slot(cluster_groups) == [], _describe(cross_slot(cluster_groups))


def test_the_one_server_unit_spans_slots(scenario_groups: list[Group]) -> None:
    """The control beside the rule above: on one server a unit is one script over the record's
    slot, the stream and the history list, which the rule catches."""
    units = [g for g in scenario_groups if g.script == UNIT_SHA]
    assert len(units) > 30
    assert len(cross_slot(units)) > 30


def test_a_cross_slot_transaction_or_script_is_caught(
    recording: valkey.Valkey, client: valkey.Valkey, recorder: Recorder, settings: Settings
) -> None:
    prefix = settings.key_prefix
    same = [f"{prefix}{{tag}}:a", f"{prefix}{{tag}}:b"]
    apart = [f"{prefix}mem:one", f"{prefix}audit"]
    for keys in (same, apart):
        pipe: Any = recording.pipeline(transaction=True)
        pipe.set(keys[0], "1")
        pipe.set(keys[1], "2")
        pipe.execute()
        recording.eval(
            "redis.call('SET', KEYS[1], '1') return redis.call('EXISTS', KEYS[2])", 2, *keys
        )
    recording.delete(*apart)  # a plain multi-key command is a unit too
    groups = atomic_groups(recorder.sent, KeysOf(client))
    assert [(g.kind, len(g.keys)) for g in groups] == [
        ("MULTI", 2),
        ("EVAL", 2),
        ("MULTI", 2),
        ("EVAL", 2),
        ("DEL", 2),
    ]
    caught = cross_slot(groups)
    assert [g.kind for g in caught] == ["MULTI", "EVAL", "DEL"]
    assert all(set(g.keys) == {k.encode() for k in apart} for g in caught)


def _describe(groups: list[Group]) -> str:
    return "; ".join(
        (
            f"{g.kind} {list(g.commands)} over {[k.decode(errors='replace') for k in g.keys]} "
            f"(slots {sorted(g.slots())})"
        )
        for g in groups
    )
