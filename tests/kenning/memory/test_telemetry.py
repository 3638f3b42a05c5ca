"""The telemetry engine calls the dashboard pages over: the recall log search pages on with a
cursor, and the spend report says when the LLM extras fall back (a cap spent)
-- with a positive control."""

from __future__ import annotations

from typing import Any

from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.llm import spend
from kenning.llm.client import Llm
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.store.llm import UsageLedger
from tests.conftest import make_settings


def test_the_recall_log_search_pages_with_a_cursor(engine: Engine) -> None:
    engine.memories.remember(
        Draft(content="Deploys run from the release branch through Kamal"), actor="pytest"
    )
    for who in ("agent-1", "agent-2", "agent-3"):
        engine.recaller.recall(RecallRequest("how do deploys run?", actor=who))
    engine.recaller.recall(RecallRequest("which branch is released?", actor="agent-other"))
    first = engine.telemetry.search_log(text="deploys", limit=2)
    assert [e.actor for e in first.entries] == ["agent-3", "agent-2"]
    assert first.next == first.entries[-1].id
    rest = engine.telemetry.search_log(text="deploys", before=first.next, limit=2)
    assert [e.actor for e in rest.entries] == ["agent-1"]
    assert rest.next is None


def keyed(settings: Settings, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "key_prefix": settings.key_prefix,
        "anthropic_api_key": "sk-test-not-real",
        "anthropic_base_url": "http://127.0.0.1:9",
        **overrides,
    }
    return make_settings(settings.data_dir, settings.valkey_port, **values)


def test_spend_says_when_the_extras_fall_back(
    engine: Engine, settings: Settings, clock: ManualClock
) -> None:
    ledger = UsageLedger(engine.store.client, engine.store.prefix)
    llm = Llm(
        keyed(settings, llm_daily_token_cap=1000, llm_project_daily_token_cap=400), ledger, clock
    )
    ledger.add(llm.day(), "alpha", 300)
    within = spend.report(llm)
    assert within.state == "on"  # positive control: a key and room under both caps
    assert within.cap_used_percent == 30.0
    ledger.add(llm.day(), "alpha", 200)
    over_project = spend.report(llm)
    assert (over_project.state, over_project.reason) == ("falling_back", "project_cap")
    assert over_project.projects_over_cap == ["alpha"]
    ledger.add(llm.day(), "beta", 600)
    assert (spend.report(llm).state, spend.report(llm).reason) == ("falling_back", "daily_cap")
    assert "sk-test" not in str(spend.report(llm))


def test_the_log_search_reads_words_the_log_stores_escaped(engine: Engine) -> None:
    engine.memories.remember(
        Draft(content="Deploys run from the release branch through Kamal"), actor="pytest"
    )
    fullwidth = "ｄｅｐｌｏｙｓ from which branch?"
    engine.recaller.recall(RecallRequest(fullwidth, actor="agent-wide"))
    engine.recaller.recall(RecallRequest("déploiement: which branch deploys?", actor="agent-fr"))
    engine.recaller.recall(RecallRequest("which branch is released?", actor="agent-other"))
    found = engine.telemetry.search_log(text="Deploys").entries
    assert [e.actor for e in found] == ["agent-fr", "agent-wide"]
    assert [e.actor for e in engine.telemetry.search_log(text="déploiement").entries] == [
        "agent-fr"
    ]
