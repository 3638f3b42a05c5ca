"""The session-start briefing: every section, exclusions with positive
controls, and the size bound."""

from __future__ import annotations

import json

import pytest

from kenning.core.clock import ManualClock
from kenning.core.errors import InvalidInput
from kenning.curation.briefing import BUDGET, Blocker, Item, Sections, Side, bounded, estimate
from kenning.engine import Engine
from kenning.memory.experience import Approach
from kenning.memory.memories import Draft

DAY = 86_400.0


def _remember(engine: Engine, text: str, **kwargs: object) -> str:
    return engine.memories.remember(Draft(text, project="shop", **kwargs), actor="agent").key  # type: ignore[arg-type]


def test_briefing_has_every_section(engine: Engine, clock: ManualClock) -> None:
    stale = _remember(engine, "The invoice PDFs are rendered with WeasyPrint")
    clock.advance(200 * DAY)
    engine.projects.set(
        "shop", actor="alice", description="The web shop", state="migrating payments to Stripe"
    )
    hinted = _remember(engine, "Payment webhooks must be idempotent", namespace="episodic")
    engine.lifecycle.deprioritise(
        hinted, reason="payments paused", actor="alice", reinstate_hints=["stripe"]
    )
    engine.experience.log_abandoned(
        Approach("celery", "library", "too heavy for two workers"),
        effort=3,
        project="shop",
        actor="agent",
    )
    older = _remember(engine, "Do not use pickle")
    newer = _remember(engine, "Use pickle for caching")
    clock.advance(60)
    newest = _remember(engine, "Product images live in the S3 bucket shop-media")
    engine.maintenance.run()
    brief = engine.briefing.briefing("shop")
    assert brief.public()["context"]["state"] == "migrating payments to Stripe"
    (blocker,) = brief.sections.contradictions
    assert (blocker.a.key, blocker.b.key) == (older, newer)
    assert [g.name for g in brief.sections.graveyard] == ["celery"]
    recent = [m.key for m in brief.sections.recent_knowledge]
    assert recent[0] == newest
    assert {older, newer} <= set(recent)
    assert [(c.key, c.matched_hints) for c in brief.sections.reinstate_candidates] == [
        (hinted, ["stripe"])
    ]
    assert [m.key for m in brief.sections.stale] == [stale]
    assert brief.maintenance is not None
    assert brief.maintenance.contradictions_closed == 0
    assert brief.truncated is False


def test_superseded_and_suppressed_memories_leave_the_briefing(engine: Engine) -> None:
    fly = _remember(engine, "We deploy with Fly")
    kamal = _remember(engine, "We no longer use Fly; we deploy with Kamal")
    secret = _remember(engine, "The legacy admin panel lives at /old-admin")
    before = [m.key for m in engine.briefing.briefing("shop").sections.recent_knowledge]
    assert {fly, kamal, secret} <= set(before)  # positive control
    (record,), _ = engine.contradictions.listing()
    engine.contradictions.resolve(record.id, "keep_b", None, actor="alice")
    engine.suppressions.suppress("legacy admin panel", "decommissioned", actor="alice")
    brief = engine.briefing.briefing("shop")
    after = [m.key for m in brief.sections.recent_knowledge]
    assert kamal in after
    assert fly not in after
    assert secret not in after
    assert brief.sections.contradictions == []
    assert [s.term for s in brief.sections.suppressed] == ["legacy admin panel"]


def _items(letter: str, count: int, content: str) -> list[Item]:
    return [
        Item(
            key=f"{letter}{i}",
            content=content,
            project="shop",
            created_at=None,
            trust="stated",
            tags=[],
        )
        for i in range(count)
    ]


def test_bounded_trims_the_least_important_sections_first() -> None:
    long = "x" * 200
    blockers = [
        Blocker(id=f"c{i}", a=Side("a", long), b=Side("b", None), evidence={}, detected_at=None)
        for i in range(10)
    ]
    sections = Sections(
        contradictions=blockers,
        graveyard=[],
        recent_knowledge=_items("k", 50, long),
        reinstate_candidates=[],
        stale=_items("s", 50, long),
        suppressed=[],
    )
    trimmed, truncated = bounded(sections, budget=BUDGET // 2)
    assert truncated is True
    assert trimmed.stale == []
    assert len(trimmed.contradictions) == 10
    assert 0 < len(trimmed.recent_knowledge) < 50
    assert len(json.dumps(trimmed.public())) <= BUDGET // 2
    short = Sections(
        contradictions=[],
        graveyard=[],
        recent_knowledge=[],
        reinstate_candidates=[],
        stale=_items("s", 1, "short"),
        suppressed=[],
    )
    assert bounded(short) == (short, False)


def test_open_contradictions_of_global_memories_are_blockers_everywhere(engine: Engine) -> None:
    engine.memories.remember(Draft("Never commit secrets to the repository"), actor="a")
    engine.memories.remember(
        Draft("Commit secrets to the repository only when encrypted"), actor="a"
    )
    engine.memories.remember(Draft("Do not use pickle", project="elsewhere"), actor="a")
    engine.memories.remember(Draft("Use pickle for caching", project="elsewhere"), actor="a")
    assert engine.contradictions.listing()[1] == 2  # positive control: both pairs are open
    (blocker,) = engine.briefing.briefing("shop").sections.contradictions
    assert "secrets" in (blocker.a.content or "")
    assert len(engine.briefing.briefing("elsewhere").sections.contradictions) == 2


def test_suppressed_stale_and_reinstate_candidates_leave_the_briefing(
    engine: Engine, clock: ManualClock
) -> None:
    old = _remember(engine, "The legacy admin panel renders invoices")
    kept = _remember(engine, "The invoice PDFs are rendered with WeasyPrint")
    clock.advance(200 * DAY)
    engine.projects.set(
        "shop", actor="alice", description="The web shop", state="moving invoices to stripe"
    )
    hinted = _remember(engine, "The legacy admin panel sends Stripe payouts", namespace="episodic")
    engine.lifecycle.deprioritise(
        hinted, reason="payouts paused", actor="alice", reinstate_hints=["stripe"]
    )
    before = engine.briefing.briefing("shop")
    assert {old, kept} <= {m.key for m in before.sections.stale}  # positive controls
    assert [c.key for c in before.sections.reinstate_candidates] == [hinted]
    engine.suppressions.suppress("legacy admin panel", "decommissioned", actor="alice")
    after = engine.briefing.briefing("shop")
    assert [m.key for m in after.sections.stale] == [kept]
    assert after.sections.reinstate_candidates == []
    assert [s.term for s in after.sections.suppressed] == ["legacy admin panel"]


def test_a_briefing_keeps_within_its_token_budget_and_says_what_it_left_out(
    engine: Engine,
) -> None:
    topics = ["invoices", "carts", "coupons", "refunds", "shipping", "taxes", "reviews", "search"]
    for n, topic in enumerate(topics):
        _remember(engine, f"The {topic} service runs on port {8000 + n} and logs to {topic}.log")
    whole = engine.briefing.briefing("shop")  # the default budget: everything fits
    assert whole.budget is not None
    assert whole.budget.tokens == engine.ctx.settings.briefing_tokens == 4_000
    assert (whole.truncated, whole.budget.left_out) == (False, {})
    assert len(whole.sections.recent_knowledge) == len(topics)  # positive control: all are there
    assert whole.budget.spent == estimate(whole.public())
    small = engine.briefing.briefing("shop", budget_tokens=300)
    assert small.budget is not None
    assert small.truncated is True
    assert small.budget.spent <= 300
    assert small.budget.spent == estimate(small.public())  # what it reports is what is sent
    kept = len(small.sections.recent_knowledge)
    assert 0 < kept < len(topics)
    assert small.budget.left_out == {"recent_knowledge": len(topics) - kept}
    assert small.public()["budget"] == {
        "tokens": 300,
        "spent": small.budget.spent,
        "left_out": {"recent_knowledge": len(topics) - kept},
    }
    with pytest.raises(InvalidInput, match="budget_tokens must be a whole number from 200"):
        engine.briefing.briefing("shop", budget_tokens=10)
