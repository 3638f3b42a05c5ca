"""Concurrent read-modify-writes of one memory lose no acknowledged change (docs/reliability.md).

Threads share the engine as a server's request threads do; processes are forked from the test so
each has its own connections, as several servers or workers would.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import pytest

from kenning.core.errors import Conflict, InvalidInput
from kenning.core.models import Note
from kenning.engine import Engine
from kenning.memory.idempotency import Once
from kenning.memory.listing import Listing
from kenning.memory.memories import Draft
from kenning.store import digest

THREADS = 8


def _together(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls at once; each one's result, or the KenningError it raised."""

    def guarded(fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Conflict as exc:
            return exc

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(guarded, calls))


def _adder(engine: Engine, key: str, tag: str) -> Callable[[], Any]:
    return lambda: engine.memories.retag(key, add=[tag], actor="t")


def test_parallel_retags_keep_every_acknowledged_tag(engine: Engine) -> None:
    key = engine.memories.remember(Draft("the build cache lives in /var/cache/ci"), actor="t").key
    for round_ in range(3):
        wanted = [f"r{round_}-t{i}" for i in range(THREADS)]
        results = _together([_adder(engine, key, tag) for tag in wanted])
        assert not [r for r in results if isinstance(r, Exception)]
        assert sorted(engine.memories.get(key).tags) == sorted(wanted)
        engine.memories.retag(key, remove=wanted, actor="t")
        assert engine.memories.get(key).tags == ()
    retags = [e for e in engine.store.audit.history(key) if e.action == "retag"]
    assert len(retags) == 3 * (THREADS + 1)
    # every event's "before" is a state the store held: adds in a round chain from () to all eight
    first_round = [e for e in retags if all(t.startswith("r0-") for t in e.details["after"])][
        :THREADS
    ]
    assert sorted(len(e.details["before"]) for e in first_round) == list(range(THREADS))


def test_parallel_updates_each_replace_the_content_the_audit_says(engine: Engine) -> None:
    original = "the staging database is postgres 14"
    key = engine.memories.remember(Draft(original), actor="t").key
    texts = [
        f"the staging database is postgres 14, checked by reviewer number {i}" for i in range(6)
    ]
    results = _together([partial(engine.memories.update, key, text, actor="t") for text in texts])
    assert not [r for r in results if isinstance(r, Exception)]
    events = [e for e in engine.store.audit.history(key) if e.action == "update"]
    chain = {e.before: e.after for e in events}
    assert len(chain) == len(texts)  # no two updates replaced the same content
    seen, at = [], digest(original)
    while at in chain:
        at = chain[at]
        seen.append(at)
    assert sorted(seen) == sorted(digest(t) for t in texts)
    assert at == digest(engine.memories.get(key).content)


def test_parallel_transitions_move_a_memory_once(engine: Engine) -> None:
    key = engine.memories.remember(Draft("run the nightly export at 02:00 UTC"), actor="t").key
    results = _together(
        [
            lambda: engine.lifecycle.deprioritise(key, reason="stale", actor="t")
            for _ in range(THREADS)
        ]
    )
    moved = [r for r in results if not isinstance(r, Exception)]
    assert len(moved) == 1
    assert all(
        "cannot move from deprioritised" in str(r) for r in results if isinstance(r, Exception)
    )
    events = [e for e in engine.store.audit.history(key) if e.action == "deprioritise"]
    assert len(events) == 1
    assert engine.memories.get(key).state == "deprioritised"


def _retag_in_child(engine: Engine, key: str, tags: list[str]) -> None:
    for tag in tags:
        engine.memories.retag(key, add=[tag], actor="child")


def test_parallel_retags_from_several_processes_keep_every_tag(engine: Engine) -> None:
    key = engine.memories.remember(
        Draft("the release train leaves every second Tuesday"), actor="t"
    ).key
    per_process = {p: [f"p{p}-t{i}" for i in range(4)] for p in range(4)}
    fork = multiprocessing.get_context("fork")
    children = [
        fork.Process(target=_retag_in_child, args=(engine, key, tags))
        for tags in per_process.values()
    ]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=120)
    assert [c.exitcode for c in children] == [0] * len(children)
    expected = sorted(t for tags in per_process.values() for t in tags)
    assert sorted(engine.memories.get(key).tags) == expected
    assert len([e for e in engine.store.audit.history(key) if e.action == "retag"]) == len(expected)


def test_parallel_identical_remembers_store_one(engine: Engine) -> None:
    text = "the integration tests need the fake SMTP server on port 2525"
    results = _together(
        [
            partial(engine.memories.remember, Draft(text, project="mail"), actor="t")
            for _ in range(THREADS)
        ]
    )
    stored = [r for r in results if r.status == "stored"]
    assert len(stored) == 1
    assert sorted(r.status for r in results) == ["duplicate"] * (THREADS - 1) + ["stored"]
    assert {r.key for r in results} == {stored[0].key}  # every loser names the winner
    assert engine.memories.list(Listing(projects=["mail"], limit=20)).total == 1


def test_a_remember_gives_its_claim_up_whether_it_stored_or_found_a_duplicate(
    engine: Engine,
) -> None:
    """The claim's release rides in the write's round trip (or goes alone on a
    duplicate): none is left held."""
    pattern = engine.store.key("claim", "remember", "*")
    held = engine.store.lease(engine.store.key("claim", "remember", "control"), "someone", 30)
    assert held.hold()  # positive control: a held claim is seen by the scan below
    assert [k.decode() for k in engine.store.client.scan_iter(pattern)] == [held.key]
    assert held.release()
    text = "the nightly export writes to the reports bucket in eu-west-1"
    first = engine.memories.remember(Draft(text, project="exports"), actor="t")
    again = engine.memories.remember(Draft(text, project="exports"), actor="t")
    assert (first.status, again.status, again.key) == ("stored", "duplicate", first.key)
    assert list(engine.store.client.scan_iter(pattern)) == []


def test_an_idempotent_remember_replayed_returns_the_first_result(engine: Engine) -> None:
    draft = Draft("the staging cluster is drained every Sunday at 03:00", project="ops")
    first = engine.memories.remember(draft, actor="t", idempotency_key="call-0001")
    again = engine.memories.remember(
        draft, actor="t", idempotency_key="call-0001", allow_duplicate=True
    )
    assert (again.status, again.key) == ("stored", first.key)
    other = engine.memories.remember(
        draft, actor="t", idempotency_key="call-0002", allow_duplicate=True
    )
    assert other.key != first.key  # the positive control: a new key does store a second copy
    assert engine.memories.list(Listing(projects=["ops"], limit=20)).total == 2
    with pytest.raises(Conflict, match="different request"):
        engine.memories.remember(
            Draft("something else entirely", project="ops"), actor="t", idempotency_key="call-0001"
        )
    with pytest.raises(InvalidInput, match="idempotency key"):
        engine.memories.remember(draft, actor="t", idempotency_key="no spaces")


def test_an_idempotent_reply_keeps_its_notes_as_fields_and_an_older_worded_reply_still_replays(
    engine: Engine,
) -> None:
    engine.suppressions.suppress("legacy billing", "retired", actor="alice")
    draft = Draft("the legacy billing cron runs at midnight", project="ops")
    first = engine.memories.remember(draft, actor="t", idempotency_key="noted-call-1")
    assert first.notes == (Note("suppressed", term="legacy billing", reason="retired"),)
    digest = Once(engine.ctx, "t", "noted-call-1", "").digest
    kept = engine.store.replies.reply(digest, wait_seconds=0)
    assert kept is not None
    assert kept["result"]["notes"] == [
        {"kind": "suppressed", "term": "legacy billing", "reason": "retired"}
    ]
    assert (
        engine.memories.remember(draft, actor="t", idempotency_key="noted-call-1").notes
        == first.notes
    )
    worded = (
        "stored, but hidden from recall and briefings by the suppression of "
        "'legacy billing' (retired)"
    )
    engine.store.replies.keep(
        digest, {**kept, "result": {**kept["result"], "notes": [worded]}}, ttl_seconds=60
    )
    replayed = engine.memories.remember(draft, actor="t", idempotency_key="noted-call-1")
    assert (replayed.key, replayed.notes) == (first.key, (Note("said", text=worded),))


def test_an_idempotent_remember_whose_reply_was_lost_is_not_stored_twice(engine: Engine) -> None:
    draft = Draft("the VPN certificate renews on the first of each month", project="ops")
    first = engine.memories.remember(draft, actor="t", idempotency_key="lost-reply-1")
    engine.store.client.delete(
        f"{engine.store.prefix}idem:" + Once(engine.ctx, "t", "lost-reply-1", "").digest
    )
    again = engine.memories.remember(
        draft, actor="t", idempotency_key="lost-reply-1", allow_duplicate=True
    )
    assert (again.status, again.key) == ("stored", first.key)
    assert engine.memories.list(Listing(projects=["ops"], limit=20)).total == 1


def test_parallel_idempotent_remembers_write_once(engine: Engine) -> None:
    draft = Draft("the docs site deploys from the gh-pages branch", project="docs")
    results = _together(
        [
            partial(
                engine.memories.remember,
                draft,
                actor="t",
                idempotency_key="same-call-9",
                allow_duplicate=True,
            )
            for _ in range(THREADS)
        ]
    )
    assert {(r.status, r.key) for r in results} == {("stored", results[0].key)}
    assert engine.memories.list(Listing(projects=["docs"], limit=20)).total == 1
    assert (
        len([e for e in engine.store.audit.history(results[0].key) if e.action == "remember"]) == 1
    )
