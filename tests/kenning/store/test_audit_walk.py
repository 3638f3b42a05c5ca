"""Every mutating engine method, walked in one story: each records exactly
the audit events it should.

Each step is run and the events it appended to the audit stream are compared (action and key, in
order) with the ones the step must produce; a call that changes nothing must record nothing. Feed
ingestion is walked in tests/kenning/feeds (it needs the local feed server),
backups in test_backup.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kenning.access.accounts import Accounts
from kenning.access.oauth import ClientInfo, OAuth
from kenning.core.errors import NotFound
from kenning.engine import Engine
from kenning.memory.bulk import Bulk
from kenning.memory.experience import Approach, Report
from kenning.memory.memories import Draft
from tests.kenning.skill_history import DOMAIN, seed

Events = list[tuple[str, str]]


def recorded(engine: Engine, step: Callable[[], Any]) -> tuple[Any, Events]:
    """The step's result and the (action, key) of each event it appended, oldest first."""
    newest = engine.store.audit.recent(limit=1)
    mark = newest[0].id if newest else None
    result = step()
    added: Events = []
    for event in engine.store.audit.recent(limit=200):
        if event.id == mark:
            break
        added.append((event.action, event.key))
    return result, added[::-1]


def remember(engine: Engine, text: str, **draft: Any) -> tuple[str, Events]:
    result, events = recorded(
        engine, lambda: engine.memories.remember(Draft(text, **draft), actor="agent")
    )
    return str(result.key), events


def test_each_memory_write_records_its_event(engine: Engine) -> None:
    a, events = remember(
        engine, "The staging database runs Postgres 16 on the db-2 host.", project="p"
    )
    assert events == [("remember", a)]
    _, events = recorded(
        engine,
        lambda: engine.memories.remember(
            Draft("The staging database runs Postgres 16 on the db-2 host.", project="p"),
            actor="agent",
        ),
    )
    assert events == []  # a refused duplicate writes nothing and records nothing
    steps: list[tuple[Callable[[], Any], Events]] = [
        (
            lambda: engine.memories.update(
                a,
                "The staging database runs Postgres 17 on the db-2 host.",
                actor="agent",
                reason="upgraded",
            ),
            [("update", a)],
        ),
        (
            lambda: engine.memories.retag(a, add=["db"], actor="agent", reason="file it"),
            [("retag", a)],
        ),
        (
            lambda: engine.lifecycle.deprioritise(a, reason="rarely needed", actor="agent"),
            [("deprioritise", a)],
        ),
        (
            lambda: engine.lifecycle.reinstate(a, reason="needed again", actor="agent"),
            [("reinstate", a)],
        ),
        (lambda: engine.belief.verify(a, "checked on the host", actor="person"), [("verify", a)]),
        (
            lambda: engine.experience.record_experience(
                a, Report(effort=2, outcome="succeeded"), actor="agent"
            ),
            [("record_experience", a)],
        ),
        (
            lambda: engine.lifecycle.archive(a, reason="moved to the wiki", actor="agent"),
            [("archive", a)],
        ),
        (
            lambda: engine.memories.forget(a, confirm=True, actor="agent", reason="wrong"),
            [("forget", a)],
        ),
        (
            lambda: engine.history.restore_forgotten(a, actor="person", reason="it was right"),
            [("restore_forgotten", a)],
        ),
    ]
    for step, expected in steps:
        assert recorded(engine, step)[1] == expected
    _, events = recorded(
        engine, lambda: engine.memories.forget(a, actor="agent", reason="preview only")
    )
    assert events == []  # a preview changes nothing


def test_trust_and_contradiction_writes_record_their_events(engine: Engine) -> None:
    a, _ = remember(engine, "Always use pickle for the session cache.", project="p")
    b, events = remember(engine, "Never use pickle for the session cache.", project="p")
    # the check opened a contradiction
    assert events == [("remember", b), ("dispute", a), ("dispute", b)]
    [[record], _] = engine.contradictions.listing(key=b)

    def resolve(decision: str, **extra: str) -> Events:
        return recorded(
            engine,
            lambda: engine.contradictions.resolve(
                record.id, decision, "settled", actor="person", **extra
            ),
        )[1]

    settled = [("resolve_contradiction", a), ("resolve_contradiction", b)]
    assert resolve("keep_b") == [("supersede", a), ("undispute", b), *settled]
    assert resolve("keep_a") == [("unsupersede", a), ("supersede", b), *settled]
    merged = resolve("merge", content="Use pickle only for the internal session cache.")
    merged_key = engine.contradictions.get(record.id).merged_key
    assert merged == [
        ("unsupersede", b),
        ("merge", merged_key),
        ("supersede", a),
        ("supersede", b),
        *settled,
    ]
    assert recorded(
        engine,
        lambda: engine.belief.set_trust(merged_key, "verified", actor="person", reason="checked"),
    )[1] == [("trust", merged_key)]
    # unchanged: not written
    assert (
        recorded(
            engine,
            lambda: engine.belief.set_trust(merged_key, "verified", actor="person", reason="again"),
        )[1]
        == []
    )


def test_registry_duplicate_project_and_bulk_writes_record_their_events(engine: Engine) -> None:
    c, _ = remember(engine, "The CI runners use 4 cores.", project="q", tags=["ci"])
    d = engine.memories.remember(
        Draft("The CI runners use 4 cores.", project="q", tags=["infra"]),
        actor="agent",
        allow_duplicate=True,
    ).key
    assert recorded(engine, lambda: engine.duplicates.merge(c, [d], "same fact", actor="person"))[
        1
    ] == [("archive", d), ("retag", c), ("merge_duplicates", c)]
    steps: list[tuple[Callable[[], Any], Events]] = [
        (
            lambda: engine.suppressions.suppress("runners", "noise", actor="person"),
            [("suppress", "")],
        ),
        (
            lambda: engine.suppressions.suppress("runners", "noise", actor="person"),
            [],
        ),  # already: unchanged
        (lambda: engine.suppressions.unsuppress("runners", actor="person"), [("unsuppress", "")]),
        (
            lambda: engine.projects.set("q", actor="person", description="The Q service"),
            [("project_context", engine.projects.key("q"))],
        ),
        (lambda: engine.tokens.create("ci", "read", actor="person"), [("token_create", "")]),
        (lambda: engine.tokens.revoke("ci", actor="person"), [("token_revoke", "")]),
    ]
    for step, expected in steps:
        assert recorded(engine, step)[1] == expected
    results, events = recorded(
        engine,
        lambda: Bulk(engine.ctx, engine.memories).remember_many(
            [
                Draft("Grafana runs on port 3000.", project="q"),
                Draft("Loki keeps logs for 14 days.", project="q"),
                Draft("The CI runners use 4 cores.", project="q"),
            ],
            actor="importer",
        ),
    )
    assert [r.status for r in results] == ["stored", "stored", "duplicate"]
    assert events == [("remember", results[0].key), ("remember", results[1].key)]
    _, events = recorded(
        engine,
        lambda: engine.lifecycle.delete_project(
            "q", confirm=True, actor="person", reason="retired"
        ),
    )
    assert sorted(events) == sorted(
        ("forget", k) for k in (c, d, results[0].key, results[1].key, engine.projects.key("q"))
    )


def test_skill_gate_writes_record_their_events(engine: Engine) -> None:
    history = seed(engine)
    proposal, events = recorded(engine, lambda: engine.skills.compile_skill(DOMAIN, actor="agent"))
    assert events == [("skill_propose", "")]
    assert recorded(engine, lambda: engine.skills.approve(proposal.id, proposal.sha, "ana"))[1] == [
        ("skill_approve", "")
    ]
    _, events = recorded(engine, lambda: engine.skills.write(proposal.id, actor="agent"))
    written = engine.skills.current_memory(DOMAIN)
    assert written is not None
    assert events == [("skill_write", written.key)]
    assert recorded(engine, lambda: engine.skills.bless(history.vacuum, actor="ana"))[1] == [
        ("bless", history.vacuum)
    ]
    other = engine.skills.compile_skill(DOMAIN, actor="agent")
    assert recorded(engine, lambda: engine.skills.reject(other.id, "ana", "not yet"))[1] == [
        ("skill_reject", written.key)
    ]


def test_account_writes_record_their_events(engine: Engine) -> None:
    accounts = Accounts(engine.store, engine.ctx.clock)
    steps: list[tuple[Callable[[], Any], Events]] = [
        (
            lambda: accounts.create("ana", "a long enough password", "viewer", actor="admin"),
            [("account_create", "")],
        ),
        (lambda: accounts.set_role("ana", "editor", actor="admin"), [("account_role", "")]),
        (
            lambda: accounts.set_password("ana", "another long password", actor="admin"),
            [("account_password", "")],
        ),
        (lambda: accounts.disable("ana", actor="admin"), [("account_disable", "")]),
        (lambda: accounts.enable("ana", actor="admin"), [("account_enable", "")]),
    ]
    for step, expected in steps:
        assert recorded(engine, step)[1] == expected


def test_oauth_writes_record_their_events(engine: Engine) -> None:
    accounts = Accounts(engine.store, engine.ctx.clock)
    accounts.create("ana", "a long enough password", "editor", actor="admin")
    oauth = OAuth(engine.store, engine.ctx.clock, accounts)
    client = ClientInfo(
        client_id="c1",
        name="Editor",
        redirect_uris=("http://localhost/cb",),
        scope="read write",
        auth_method="none",
        grant_types=("authorization_code", "refresh_token"),
        created_at=1.0,
        secret_digest="",
        metadata={},
    )
    assert recorded(engine, lambda: oauth.register(client, ip="10.0.0.1"))[1] == [
        ("oauth_register", "")
    ]

    def begin() -> str:
        request = oauth.begin(
            "c1", "http://localhost/cb", True, ["read", "offline_access"], None, "x" * 43, "r"
        )
        return request.id

    pending = begin()
    (code, _), events = recorded(
        engine, lambda: oauth.approve(pending, "ana", ["read", "offline_access"])
    )
    assert events == [("oauth_grant", "")]
    assert oauth.pending(pending) is None  # answered in the same unit
    assert [(g.client_id, g.username) for g in oauth.grants()] == [("c1", "ana")]
    issued, events = recorded(engine, lambda: oauth.redeem(code, refresh=True))
    assert events == [("oauth_token", "")]
    assert issued is not None
    assert issued.refresh_token is not None
    assert oauth.access(issued.access_token) is not None  # the tokens were written with the event
    rotated, events = recorded(engine, lambda: oauth.rotate(str(issued.refresh_token), ["read"]))
    assert events == [("oauth_refresh", "")]
    assert rotated is not None
    live = oauth.access(rotated.access_token)
    assert live is not None
    assert recorded(engine, lambda: oauth.revoke(live))[1] == [("oauth_revoke", "")]
    assert oauth.access(rotated.access_token) is None
    denied = begin()
    assert recorded(engine, lambda: oauth.deny(denied, "ana"))[1] == [("oauth_deny", "")]
    with pytest.raises(NotFound):  # answered once: a second answer writes and records nothing
        oauth.deny(denied, "ana")
    assert recorded(engine, lambda: oauth.revoke_client("c1", actor="admin"))[1] == [
        ("oauth_client_revoke", "")
    ]
    assert oauth.client("c1") is None
    assert oauth.grants() == []


def test_derived_index_entries_ride_with_their_write(engine: Engine) -> None:
    a, _ = remember(engine, "The release train leaves every Tuesday.", project="p")
    assert engine.store.hints.lookup(["release notes"]) == {}
    _, events = recorded(
        engine,
        lambda: engine.lifecycle.deprioritise(
            a, reason="rarely needed", actor="agent", reinstate_hints=["release notes"]
        ),
    )
    assert events == [("deprioritise", a)]
    assert list(engine.store.hints.lookup(["release notes"])["release notes"]) == [a]
    engine.lifecycle.reinstate(a, reason="needed", actor="agent")
    assert engine.store.hints.lookup(["release notes"]) == {}
    # the phrase left with its last entry
    assert "release notes" not in engine.store.hints.phrases()
    report = Report(
        effort=4,
        outcome="succeeded",
        abandoned_approaches=[Approach("cron trains", "approach", "drifted")],
    )
    _, events = recorded(
        engine, lambda: engine.experience.record_experience(a, report, actor="agent")
    )
    assert events[0] == ("record_experience", a)
    assert list(engine.store.graveyard.lookup(["cron trains"])["cron trains"]) == [a]
    assert a in engine.store.experience.keys("p", 10)
    history = seed(engine)
    assert history is not None
    proposal = engine.skills.compile_skill(DOMAIN, actor="agent")
    engine.skills.approve(proposal.id, proposal.sha, "ana")
    _, events = recorded(engine, lambda: engine.skills.write(proposal.id, actor="agent"))
    written = engine.skills.current_memory(DOMAIN)
    assert written is not None
    assert events == [("skill_write", written.key)]
