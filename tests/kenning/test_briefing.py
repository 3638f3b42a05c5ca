"""The session-start briefing: every section, exclusions with positive controls, and the size bound."""

from __future__ import annotations

from kenning.briefing import BUDGET, bounded
from kenning.clock import ManualClock
from kenning.engine import Engine
from kenning.experience import Approach
from kenning.memory import Draft

DAY = 86_400.0


def _remember(engine: Engine, text: str, **kwargs: object) -> str:
    return engine.memories.remember(Draft(text, project="shop", **kwargs), actor="agent").key  # type: ignore[arg-type]


def test_briefing_has_every_section(engine: Engine, clock: ManualClock) -> None:
    stale = _remember(engine, "The invoice PDFs are rendered with WeasyPrint")
    clock.advance(200 * DAY)
    engine.projects.set("shop", actor="alice", description="The web shop", state="migrating payments to Stripe")
    hinted = _remember(engine, "Payment webhooks must be idempotent", namespace="episodic")
    engine.lifecycle.deprioritise(hinted, reason="payments paused", actor="alice", reinstate_hints=["stripe"])
    engine.experience.log_abandoned(Approach("celery", "library", "too heavy for two workers"), effort=3,
                                    project="shop", actor="agent")
    older = _remember(engine, "Do not use pickle")
    newer = _remember(engine, "Use pickle for caching")
    clock.advance(60)
    newest = _remember(engine, "Product images live in the S3 bucket shop-media")
    engine.maintenance.run()
    brief = engine.briefing.briefing("shop")
    assert brief["context"]["state"] == "migrating payments to Stripe"
    (blocker,) = brief["contradictions"]
    assert (blocker["a"]["key"], blocker["b"]["key"]) == (older, newer)
    assert [g["name"] for g in brief["graveyard"]] == ["celery"]
    recent = [m["key"] for m in brief["recent_knowledge"]]
    assert recent[0] == newest
    assert {older, newer} <= set(recent)
    assert [(c["key"], c["matched_hints"]) for c in brief["reinstate_candidates"]] == [(hinted, ["stripe"])]
    assert [m["key"] for m in brief["stale"]] == [stale]
    assert brief["maintenance"]["contradictions_closed"] == 0
    assert brief["truncated"] is False


def test_superseded_and_suppressed_memories_leave_the_briefing(engine: Engine) -> None:
    fly = _remember(engine, "We deploy with Fly")
    kamal = _remember(engine, "We no longer use Fly; we deploy with Kamal")
    secret = _remember(engine, "The legacy admin panel lives at /old-admin")
    before = [m["key"] for m in engine.briefing.briefing("shop")["recent_knowledge"]]
    assert {fly, kamal, secret} <= set(before)  # positive control
    (record,), _ = engine.contradictions.listing()
    engine.contradictions.resolve(record.id, "keep_b", None, actor="alice")
    engine.suppressions.suppress("legacy admin panel", "decommissioned", actor="alice")
    brief = engine.briefing.briefing("shop")
    after = [m["key"] for m in brief["recent_knowledge"]]
    assert kamal in after
    assert fly not in after
    assert secret not in after
    assert brief["contradictions"] == []
    assert [s["term"] for s in brief["suppressed"]] == ["legacy admin panel"]


def test_bounded_trims_the_least_important_sections_first() -> None:
    long = "x" * 200
    sections = {"contradictions": [{"c": long}] * 10, "recent_knowledge": [{"k": long}] * 50,
                "stale": [{"s": long}] * 50}
    trimmed, truncated = bounded(sections, budget=BUDGET // 2)
    assert truncated is True
    assert trimmed["stale"] == []
    assert len(trimmed["contradictions"]) == 10
    assert 0 < len(trimmed["recent_knowledge"]) < 50
    same, untouched = bounded({"stale": [{"s": "short"}]})
    assert (same, untouched) == ({"stale": [{"s": "short"}]}, False)


def test_open_contradictions_of_global_memories_are_blockers_everywhere(engine: Engine) -> None:
    engine.memories.remember(Draft("Never commit secrets to the repository"), actor="a")
    engine.memories.remember(Draft("Commit secrets to the repository only when encrypted"), actor="a")
    engine.memories.remember(Draft("Do not use pickle", project="elsewhere"), actor="a")
    engine.memories.remember(Draft("Use pickle for caching", project="elsewhere"), actor="a")
    assert engine.contradictions.listing()[1] == 2  # positive control: both pairs are open
    (blocker,) = engine.briefing.briefing("shop")["contradictions"]
    assert "secrets" in blocker["a"]["content"]
    assert len(engine.briefing.briefing("elsewhere")["contradictions"]) == 2


def test_suppressed_stale_and_reinstate_candidates_leave_the_briefing(engine: Engine, clock: ManualClock) -> None:
    old = _remember(engine, "The legacy admin panel renders invoices")
    kept = _remember(engine, "The invoice PDFs are rendered with WeasyPrint")
    clock.advance(200 * DAY)
    engine.projects.set("shop", actor="alice", description="The web shop", state="moving invoices to stripe")
    hinted = _remember(engine, "The legacy admin panel sends Stripe payouts", namespace="episodic")
    engine.lifecycle.deprioritise(hinted, reason="payouts paused", actor="alice", reinstate_hints=["stripe"])
    before = engine.briefing.briefing("shop")
    assert {old, kept} <= {m["key"] for m in before["stale"]}  # positive controls
    assert [c["key"] for c in before["reinstate_candidates"]] == [hinted]
    engine.suppressions.suppress("legacy admin panel", "decommissioned", actor="alice")
    after = engine.briefing.briefing("shop")
    assert [m["key"] for m in after["stale"]] == [kept]
    assert after["reinstate_candidates"] == []
    assert [s["term"] for s in after["suppressed"]] == ["legacy admin panel"]
