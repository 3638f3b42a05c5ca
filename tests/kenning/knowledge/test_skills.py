"""The skill compiler against the real store and model: rules, reinforcement,
the approval gate, search."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import valkey

from kenning.core.clock import ManualClock
from kenning.core.errors import Conflict, InvalidInput, NotFound
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.knowledge import skill_doc
from kenning.memory.memories import Draft
from kenning.runtime.embedding import Embedder
from tests.conftest import _wipe
from tests.kenning.skill_history import (
    DO_RULE,
    DOMAIN,
    GOTCHA,
    PGBOUNCER,
    VACUUM_RULE,
    History,
    seed,
)


@pytest.fixture
def history(engine: Engine) -> History:
    return seed(engine)


def rule_texts(body: str) -> dict[str, list[str]]:
    document = skill_doc.parse(body)
    return {s: [r.text for r in document.rules if r.section == s] for s in skill_doc.SECTIONS}


def test_a_domain_compiles_to_reinforced_rules_citing_their_sources(
    engine: Engine, history: History
) -> None:
    preview = engine.skills.compile_skill(DOMAIN, mode="preview", actor="agent")
    rules = rule_texts(preview.body)
    assert rules["do"] == [DO_RULE]  # the two concurrent-index memories are one rule
    assert rules["watch"] == [GOTCHA]
    assert len(rules["dont"]) == 1
    assert f"`{PGBOUNCER}`" in rules["dont"][0]
    assert "Set maxmemory-policy explicitly" not in preview.body  # another tag, another skill
    assert [h["rule"] for h in preview.held] == [VACUUM_RULE]  # one source only
    document = skill_doc.parse(preview.body)
    prefix = engine.store.prefix
    cited = {r.section: {skill_doc.key_of(c, prefix) for c in r.sources} for r in document.rules}
    assert cited["do"] == {history.orders, history.payments}
    assert cited["dont"] == {history.pooling, history.pooling_again}
    for citation in document.citations():  # every citation resolves to a memory of this store
        assert engine.memories.get(skill_doc.key_of(citation, prefix)).content
    assert preview.id == ""
    assert engine.skills.proposals() == []


def test_reinforcement_threshold_and_a_persons_blessing(engine: Engine, history: History) -> None:
    assert (
        VACUUM_RULE not in engine.skills.compile_skill(DOMAIN, mode="preview", actor="agent").body
    )
    engine.skills.bless(history.vacuum, actor="ana", reason="verified on production")
    assert VACUUM_RULE in engine.skills.compile_skill(DOMAIN, mode="preview", actor="agent").body
    assert [e.action for e in engine.store.audit.history(history.vacuum)][-1] == "bless"


def test_a_higher_threshold_holds_two_source_rules_back(
    engine: Engine, history: History, settings: Settings, client: valkey.Valkey, embedder: Embedder
) -> None:
    stricter = settings.model_copy(update={"skill_min_sources": 3})
    strict = Engine.open(stricter, client, embedder, clock=engine.ctx.clock).skills
    preview = strict.compile_skill(DOMAIN, mode="preview", actor="agent")
    assert skill_doc.parse(preview.body).rules == ()
    assert {h["rule"] for h in preview.held} >= {DO_RULE, GOTCHA, VACUUM_RULE}
    with pytest.raises(InvalidInput, match="reinforced enough"):
        strict.compile_skill(DOMAIN, actor="agent")


def test_rendering_is_byte_stable_apart_from_compiled_at(
    engine: Engine, history: History, clock: ManualClock
) -> None:
    first = engine.skills.compile_skill(DOMAIN, mode="preview", actor="agent")
    clock.advance(3600)
    second = engine.skills.compile_skill(DOMAIN, mode="preview", actor="someone-else")
    assert first.body != second.body  # positive control: the compiled_at line moved
    assert skill_doc.canonical(first.body) == skill_doc.canonical(second.body)
    assert first.sha == second.sha


def test_the_gate_refuses_unapproved_other_sha_and_stale_base(
    engine: Engine, history: History
) -> None:
    proposal = engine.skills.compile_skill(DOMAIN, actor="agent")
    assert proposal.base_sha == ""
    assert proposal.changes
    with pytest.raises(Conflict, match="only an approved proposal"):
        engine.skills.write(proposal.id, actor="agent")
    with pytest.raises(Conflict, match="names sha"):
        engine.skills.approve(proposal.id, "0" * 64, "ana")
    assert engine.skills.proposal(proposal.id).status == "pending"
    # a second proposal on the same base; the first one is approved and written
    engine.skills.bless(history.vacuum, actor="ana")
    rival = engine.skills.compile_skill(DOMAIN, actor="agent")
    engine.skills.approve(rival.id, rival.sha, "ana")
    approved = engine.skills.approve(proposal.id, proposal.sha, "ana")
    assert approved.status == "approved"
    assert approved.approved_by == "ana"
    written = engine.skills.write(proposal.id, actor="agent")
    assert engine.skills.get(DOMAIN).sha == proposal.sha == written.sha
    with pytest.raises(Conflict, match="changed since"):  # rival's base moved under it
        engine.skills.write(rival.id, actor="agent")
    assert engine.skills.proposal(rival.id).status == "stale"
    assert engine.skills.get(DOMAIN).sha == proposal.sha


def test_writing_audits_and_a_recompile_diffs_against_the_written_skill(
    engine: Engine, history: History
) -> None:
    first = engine.skills.compile_skill(DOMAIN, actor="agent")
    engine.skills.approve(first.id, first.sha, "ana")
    skill = engine.skills.write(first.id, actor="agent")
    actions = [e.action for e in engine.store.audit.history(skill.key)]
    assert actions == ["skill_write"]
    approvals = engine.store.audit.recent(action="skill_approve")
    assert [e.actor for e in approvals] == ["ana"]
    with pytest.raises(Conflict, match="already current"):
        engine.skills.compile_skill(DOMAIN, actor="agent")
    engine.skills.bless(history.vacuum, actor="ana")
    second = engine.skills.compile_skill(DOMAIN, actor="agent")
    assert second.base_sha == skill.sha
    assert f"+- {VACUUM_RULE}" in second.diff
    assert [(c["change"], c["section"], c["risk"]) for c in second.changes] == [
        ("added", "Do", "low")
    ]
    rejected = engine.skills.reject(second.id, "ana", reason="not yet")
    assert rejected.status == "rejected"
    with pytest.raises(Conflict, match="not pending"):
        engine.skills.approve(second.id, second.sha, "ana")
    listed = [(p.id, p.status) for p in engine.skills.proposals(domain=DOMAIN)]
    assert listed == [(second.id, "rejected"), (first.id, "written")]
    assert engine.store.audit.recent(action="skill_reject")[0].reason == "not yet"


def test_bad_proposal_ids_and_shas_are_refused_with_a_hint(engine: Engine) -> None:
    with pytest.raises(InvalidInput, match="not a proposal id"):
        engine.skills.approve("nope", "a" * 64, "ana")
    with pytest.raises(NotFound, match="no skill proposal"):
        engine.skills.approve("01J9Z8Q4M5X7B2C3D4E5F6G7H8", "a" * 64, "ana")
    with pytest.raises(InvalidInput, match="64 hex digits"):
        engine.skills.approve("01J9Z8Q4M5X7B2C3D4E5F6G7H8", "ABC", "ana")
    with pytest.raises(InvalidInput, match="domain"):
        engine.skills.compile_skill("../etc", actor="agent")


def test_find_skills_has_a_relevance_floor_and_promoted_knowledge_is_reference(
    engine: Engine, history: History
) -> None:
    fact = engine.memories.remember(
        Draft(
            "Postgres docs: CREATE INDEX CONCURRENTLY builds an index without locking out writes.",
            namespace="knowledge",
        ),
        actor="agent",
    ).key
    engine.skills.promote(fact, DOMAIN, actor="agent", reason="the manual says so")
    proposal = engine.skills.compile_skill(DOMAIN, actor="agent")
    assert len(rule_texts(proposal.body)["reference"]) == 1
    engine.skills.approve(proposal.id, proposal.sha, "ana")
    engine.skills.write(proposal.id, actor="agent")
    found = engine.skills.find("adding an index to a busy postgres table without downtime")
    assert [f.skill.domain for f in found] == [DOMAIN]
    assert found[0].similarity >= engine.ctx.settings.skill_relevance_floor + 0.05
    unrelated = engine.skills.find("baking sourdough bread at home")
    assert unrelated == [], [f.similarity for f in unrelated]
    with pytest.raises(InvalidInput, match="knowledge"):
        engine.skills.promote(history.orders, DOMAIN, actor="agent")


def sources_counted(body: str) -> str:
    """A SKILL.md with each citation list replaced by its length (ULIDs differ run to run)."""
    return re.sub(
        r" \[([^\]]+)\]$",
        lambda m: f" [{m[1].count(',') + 1} sources]",
        skill_doc.canonical(body),
        flags=re.MULTILINE,
    )


def test_the_docs_example_is_what_the_seeded_history_compiles_to(
    engine: Engine, history: History
) -> None:
    doc = (Path(__file__).resolve().parents[3] / "docs" / "skills.md").read_text(encoding="utf-8")
    example = re.search(r"<!-- skill-example -->\n```markdown\n(.*?)```", doc, flags=re.DOTALL)
    assert example is not None
    compiled = engine.skills.compile_skill(DOMAIN, actor="agent")
    assert sources_counted(example[1]) == sources_counted(compiled.body)
    assert "[2 sources]" in sources_counted(
        compiled.body
    )  # the normalising kept the citations' shape


def test_a_restore_brings_back_the_written_skill(
    engine: Engine, history: History, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    proposal = engine.skills.compile_skill(DOMAIN, actor="agent")
    engine.skills.approve(proposal.id, proposal.sha, "ana")
    engine.skills.write(proposal.id, actor="agent")
    made = engine.backups.backup(actor="admin")
    settings = engine.ctx.settings
    _wipe(client, settings.key_prefix)
    fresh = Engine.open(settings, client, embedder, clock=clock)
    with pytest.raises(NotFound):
        fresh.skills.get(DOMAIN)
    fresh.backups.restore(fresh.backups.path_of(made.file), dry_run=False, actor="admin")
    assert fresh.skills.get(DOMAIN).sha == proposal.sha


def test_an_approved_proposal_citing_a_forgotten_memory_is_not_written(
    engine: Engine, history: History
) -> None:
    """Issue 35, item 7: the skill would cite evidence that is gone (and its export would no
    longer import); the proposal goes stale instead."""
    proposal = engine.skills.compile_skill(DOMAIN, actor="agent")
    engine.skills.approve(proposal.id, proposal.sha, "ana")
    engine.memories.forget(history.orders, confirm=True, actor="ana")
    with pytest.raises(Conflict, match="cites 1 memories forgotten since"):
        engine.skills.write(proposal.id, actor="agent")
    assert engine.skills.proposal(proposal.id).status == "stale"
    with pytest.raises(NotFound):
        engine.skills.get(DOMAIN)
    again = engine.skills.compile_skill(DOMAIN, actor="agent")  # the positive control
    engine.skills.approve(again.id, again.sha, "ana")
    assert engine.skills.write(again.id, actor="agent").sha == again.sha


def test_a_proposal_retried_with_its_idempotency_key_is_stored_once(
    engine: Engine, history: History
) -> None:
    def proposing(_: int) -> str:
        made = engine.skills.compile_skill(DOMAIN, actor="agent", idempotency_key="skill-run-0001")
        return made.id

    with ThreadPoolExecutor(3) as pool:
        ids = set(pool.map(proposing, range(3)))
    ids.add(proposing(0))
    assert len(ids) == 1
    assert len(engine.store.audit.recent(action="skill_propose")) == 1
    again = engine.skills.proposal(ids.pop())
    assert again.status == "pending"
    assert again.body
    with pytest.raises(Conflict, match="different compile_skill request"):
        engine.skills.compile_skill("redis", actor="agent", idempotency_key="skill-run-0001")
    other = engine.skills.compile_skill(DOMAIN, actor="agent", idempotency_key="skill-run-0002")
    assert other.id != again.id  # positive control: a new key proposes anew
