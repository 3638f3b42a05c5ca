"""explain_memory, memory_audit counts (FT, by namespace and state) with a page, and health."""

from __future__ import annotations

import pytest
import valkey

from kenning.core import schema
from kenning.core.errors import InvalidInput, NotFound
from kenning.engine import Engine
from kenning.memory.inspection import HISTORY_LIMIT, AuditRequest
from kenning.memory.memories import Draft


def _remember(engine: Engine, content: str, **kwargs: object) -> str:
    return engine.memories.remember(Draft(content=content, **kwargs), actor="alice").key  # type: ignore[arg-type]


def test_explain_gives_every_field_and_the_history(engine: Engine) -> None:
    key = _remember(engine, "Deploys happen on Mondays", project="ops", tags=["deploy"])
    engine.memories.update(key, "Deploys happen on Tuesdays", actor="bob", reason="moved")
    explained = engine.inspection.explain(key).public()
    memory = explained["memory"]
    assert set(memory) >= {
        "key",
        "content",
        "namespace",
        "project",
        "tags",
        "kind",
        "state",
        "trust",
        "actor",
        "created_at",
        "updated_at",
        "valid_from",
        "metadata",
        "recall_count",
    }
    assert (memory["content"], memory["project"], memory["tags"]) == (
        "Deploys happen on Tuesdays",
        "ops",
        ["deploy"],
    )
    assert explained["has_vector"] is True
    history = explained["history"]
    assert [(e["action"], e["actor"]) for e in history] == [
        ("remember", "alice"),
        ("update", "bob"),
    ]
    assert history[1]["details"]["previous_content"] == "Deploys happen on Mondays"
    assert history[1]["at"].endswith("Z")
    with pytest.raises(NotFound):
        engine.inspection.explain(key[:-4] + "ZZZZ")


def test_explain_shows_the_newest_history_when_there_is_more_than_the_limit(engine: Engine) -> None:
    key = _remember(engine, "A memory retagged many times")
    for i in range(HISTORY_LIMIT + 5):
        engine.memories.retag(
            key,
            add=["even"] if i % 2 == 0 else [],
            remove=["even"] if i % 2 else [],
            actor="alice",
            reason=f"pass {i}",
        )
    history = engine.inspection.explain(key).public()["history"]
    assert len(history) == HISTORY_LIMIT
    # the latest change is never cut off
    assert history[-1]["reason"] == f"pass {HISTORY_LIMIT + 4}"
    # the oldest events (remember, passes 0-4) are the ones left out
    assert history[0]["reason"] == "pass 5"


def test_records_come_back_in_the_order_asked_and_are_bounded(engine: Engine) -> None:
    keys = [
        _remember(engine, text) for text in ("Valkey holds the memories", "The model runs locally")
    ]
    assert [m.key for m in engine.inspection.records(list(reversed(keys)))] == list(reversed(keys))
    with pytest.raises(NotFound):
        engine.inspection.records([keys[0], keys[1][:-4] + "ZZZZ"])
    for wrong in ([], [keys[0]] * 21):
        with pytest.raises(InvalidInput, match="give 1 to 20 keys"):
            engine.inspection.records(wrong)


def test_audit_counts_by_namespace_and_state_and_pages(engine: Engine) -> None:
    keys = [
        _remember(engine, text, project="shop")
        for text in ("The cart is stored in Valkey", "Prices include VAT", "Orders ship from Leeds")
    ]
    _remember(engine, "Prefer tabs in Makefiles", namespace="preference")
    _remember(engine, "Elsewhere the cart is in Postgres", project="other")
    engine.lifecycle.deprioritise(keys[0], reason="stale", actor="alice")
    engine.lifecycle.archive(keys[1], reason="wrong", actor="alice")
    everything = engine.inspection.audit(AuditRequest())
    assert everything.counts["knowledge"] == {"active": 2, "deprioritised": 1, "archived": 1}
    assert everything.counts["preference"] == {"active": 1, "deprioritised": 0, "archived": 0}
    assert everything.total == 5
    shop = engine.inspection.audit(
        AuditRequest(projects=["shop"], namespaces=["knowledge"], limit=2)
    )
    assert shop.counts == {"knowledge": {"active": 1, "deprioritised": 1, "archived": 1}}
    assert shop.page.total == 3
    assert len(shop.page.items) == 2
    second = engine.inspection.audit(
        AuditRequest(projects=["shop"], namespaces=["knowledge"], offset=2, limit=2)
    )
    seen = {i["key"] for i in shop.page.items} | {i["key"] for i in second.page.items}
    assert seen == set(keys)
    only_active = engine.inspection.audit(AuditRequest(states=["active"], namespaces=["knowledge"]))
    assert only_active.counts == {"knowledge": {"active": 2}}
    with pytest.raises(InvalidInput, match="unknown state"):
        engine.inspection.audit(AuditRequest(states=["gone"]))


def test_health_checks_each_dependency(engine: Engine) -> None:
    health = engine.inspection.health(uptime=12.5)
    public = health.public()
    assert health.ok
    assert public["status"] == "ok"
    assert public["uptime_seconds"] == 12.5
    assert {name: check["ok"] for name, check in public["checks"].items()} == {
        "valkey": True,
        "search_module": True,
        "indexes": True,
        "model": True,
    }
    assert "384 dims" in public["model"]


def test_health_reports_index_drift(engine: Engine, client: valkey.Valkey) -> None:
    # positive control
    assert engine.inspection.health().public()["checks"]["indexes"]["ok"] is True
    live = engine.ctx.index
    # a process whose idea of the live index is stale follows the registry (a reindex elsewhere)
    engine.ctx.indexes[schema.INDEX] = live + ":r1"
    assert engine.inspection.health().public()["checks"]["indexes"]["ok"] is True
    assert engine.ctx.index == live
    # the registry names an index of another schema: drift, which a restart migrates
    registry = f"{engine.ctx.settings.key_prefix}meta:indexes"
    client.hset(registry, schema.INDEX, f"{engine.ctx.settings.key_prefix}idx:memories:0ld")
    try:
        health = engine.inspection.health()
    finally:
        client.hset(registry, schema.INDEX, live)
    assert not health.ok
    assert health.public()["checks"]["indexes"]["ok"] is False
    assert "drift: the live index" in health.public()["checks"]["indexes"]["detail"]
    assert health.public()["checks"]["valkey"]["ok"] is True


def test_audit_marks_suppressed_memories_for_a_person_and_withholds_them_from_an_agent(
    engine: Engine,
) -> None:
    hidden = _remember(engine, "Traefik terminates TLS at the edge", project="edge")
    shown = _remember(engine, "Caddy serves the docs site", project="edge")
    request = AuditRequest(projects=["edge"])
    before = engine.inspection.audit(request)
    assert {i["key"] for i in before.page.items} == {hidden, shown}  # positive control
    engine.suppressions.suppress("traefik", "migrated off it", actor="person")
    agent = engine.inspection.audit(request)
    assert ([i["key"] for i in agent.page.items], agent.page.withheld, agent.total) == (
        [shown],
        1,
        2,
    )
    person = engine.inspection.audit(request, for_person=True)
    assert {i["key"]: i["suppressed_by"] for i in person.page.items} == {
        hidden: ["traefik"],
        shown: [],
    }
    assert person.page.withheld == 0
    assert engine.inspection.explain(hidden).suppressed_by == ["traefik"]
    assert engine.inspection.explain(shown).suppressed_by == []
