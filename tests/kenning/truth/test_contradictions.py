"""Contradictions end to end on the real store and model: detect, record once, resolve, close."""

from __future__ import annotations

import pytest
import valkey

from kenning.core.clock import ManualClock
from kenning.core.errors import Conflict, InvalidInput
from kenning.core.models import Memory
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.language import polarity
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.runtime.embedding import Embedder
from kenning.store import AuditEvent
from kenning.truth.contradictions import Contradictions
from tests.conftest import make_settings
from tests.margins import assert_pair

# a direct store write records itself too
SETUP = [AuditEvent(actor="test", action="test_setup", key="")]

DAY = 86_400.0
FLY = "We deploy with Fly"
KAMAL = "We no longer use Fly; we deploy with Kamal"


def _remember(engine: Engine, text: str, project: str = "shop") -> str:
    result = engine.memories.remember(Draft(text, project=project), actor="agent")
    assert result.status == "stored"
    return result.key


def _keys(engine: Engine, text: str, **kwargs: object) -> list[str]:
    result = engine.recaller.recall(RecallRequest(text, projects=["shop"], **kwargs))  # type: ignore[arg-type]
    return [h.memory.key for h in result.hits]


def test_fly_then_kamal_is_flagged_resolved_and_answers_both_times(
    engine: Engine, clock: ManualClock
) -> None:
    fly = _remember(engine, FLY)
    before = clock.now() + 60
    clock.advance(DAY)
    result = engine.memories.remember(Draft(KAMAL, project="shop"), actor="agent")
    assert any(note.kind == "contradiction" for note in result.notes)
    kamal = result.key
    records, total = engine.contradictions.listing(status="open")
    assert total == 1
    assert (records[0].a, records[0].b, records[0].status) == (fly, kamal, "open")
    assert records[0].evidence["shared"] == ["fly"]
    assert engine.memories.get(fly).trust == engine.memories.get(kamal).trust == "disputed"
    # positive control: Fly is found before resolving
    assert fly in _keys(engine, "how do we deploy?")

    engine.contradictions.resolve(
        records[0].id, "keep_b", "moved to Kamal in the autumn", actor="alice"
    )
    loser, winner = engine.memories.get(fly), engine.memories.get(kamal)
    assert (loser.trust, loser.superseded_by, loser.valid_to) == (
        "superseded",
        kamal,
        winner.valid_from,
    )
    assert winner.trust == "stated"
    now_keys = _keys(engine, "how do we deploy?")
    assert kamal in now_keys
    assert fly not in now_keys
    assert fly in _keys(engine, "how do we deploy?", include_superseded=True)
    then_keys = _keys(engine, "how do we deploy?", as_of=before)
    assert then_keys == [fly]
    decided = [e for e in engine.store.audit.history(fly) if e.action == "resolve_contradiction"]
    assert [(e.actor, e.reason, e.details["decision"]) for e in decided] == [
        ("alice", "moved to Kamal in the autumn", "keep_b")
    ]
    assert engine.contradictions.listing(status="open") == ([], 0)


def test_agreeing_negatives_are_not_flagged(engine: Engine) -> None:
    _remember(engine, "Do not use pickle for caching")
    flagged = engine.memories.remember(
        Draft("Use pickle for caching", project="shop"), actor="agent"
    )
    assert flagged.notes  # positive control: opposite polarity on the same object is flagged
    quiet = engine.memories.remember(
        Draft("Do not use pickle for session data", project="shop"), actor="agent"
    )
    assert quiet.status == "stored"
    assert quiet.notes == ()
    assert engine.memories.get(quiet.key).trust == "stated"
    report = engine.contradictions.check(key=quiet.key, actor="agent")
    assert report.examined == 1
    assert report.opened == ()


def test_dismissed_pair_is_never_flagged_again(engine: Engine) -> None:
    a = _remember(engine, "Do not use pickle")
    b = _remember(engine, "Use pickle for caching")
    (record,), _ = engine.contradictions.listing()
    engine.contradictions.resolve(
        record.id, "not_a_contradiction", "different concerns", actor="bob"
    )
    assert engine.memories.get(a).trust == engine.memories.get(b).trust == "stated"
    for report in (
        engine.contradictions.check(key=a, actor="agent"),
        engine.contradictions.check(project="shop", actor="agent"),
    ):
        assert report.examined >= 1
        assert report.opened == ()
    assert engine.contradictions.listing(status="open") == ([], 0)
    (again,), _ = engine.contradictions.listing(status="all")
    assert (again.id, again.status, again.decision) == (
        record.id,
        "resolved",
        "not_a_contradiction",
    )


def test_check_on_demand_finds_pairs_written_without_detection(
    engine: Engine, clock: ManualClock
) -> None:
    a = _remember(engine, "Do not use pickle")
    other = engine.memories.remember(
        Draft("Use pickle for caching", project="other"), actor="agent"
    )
    assert other.notes == ()  # different projects are never candidates of each other
    text = "Use pickle for caching results"
    imported = Memory(
        key=engine.store.memories.new_key("knowledge", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ"),
        content=text,
        namespace="knowledge",
        project="shop",
        created_at=clock.now(),
        updated_at=clock.now(),
    )
    engine.memories.write_new(
        imported, engine.ctx.embedder.embed(text), actor="import", action="remember"
    )
    # positive control: nothing detected on that path
    assert engine.contradictions.listing()[1] == 0
    report = engine.contradictions.check(query_text="should we use pickle?", actor="agent")
    assert report.examined >= 3
    assert {(r.a, r.b) for r in report.opened} == {(a, imported.key)}
    assert engine.contradictions.listing()[1] == 1


def test_both_valid_needs_a_note_and_clears_both(engine: Engine) -> None:
    a = _remember(engine, "Do not use pickle")
    b = _remember(engine, "Use pickle for caching")
    (record,), _ = engine.contradictions.listing()
    with pytest.raises(InvalidInput, match="needs a note"):
        engine.contradictions.resolve(record.id, "both_valid", None, actor="bob")
    done = engine.contradictions.resolve(
        record.id, "both_valid", "caching is internal only", actor="bob"
    )
    assert (done.status, done.note, done.resolved_by) == (
        "resolved",
        "caching is internal only",
        "bob",
    )
    assert engine.memories.get(a).trust == engine.memories.get(b).trust == "stated"


def test_merge_supersedes_both_with_the_merged_memory(engine: Engine) -> None:
    a = engine.memories.remember(
        Draft("Do not use pickle", project="shop", tags=["python"]), actor="x"
    ).key
    b = engine.memories.remember(
        Draft("Use pickle for caching", project="shop", tags=["cache"]), actor="x"
    ).key
    (record,), _ = engine.contradictions.listing()
    with pytest.raises(InvalidInput, match="merged content"):
        engine.contradictions.resolve(record.id, "merge", None, actor="bob")
    done = engine.contradictions.resolve(
        record.id,
        "merge",
        None,
        actor="bob",
        content="Use pickle only for the internal cache, never for input",
    )
    merged = engine.memories.get(done.merged_key)
    assert (merged.kind, merged.tags, merged.trust) == ("merged", ("python", "cache"), "stated")
    for key in (a, b):
        side = engine.memories.get(key)
        assert (side.trust, side.superseded_by) == ("superseded", merged.key)


def test_changing_the_resolution_undoes_the_previous_one(engine: Engine) -> None:
    a = _remember(engine, "Do not use pickle")
    b = _remember(engine, "Use pickle for caching")
    (record,), _ = engine.contradictions.listing()
    engine.contradictions.resolve(record.id, "keep_a", None, actor="bob")
    assert engine.memories.get(b).trust == "superseded"
    engine.contradictions.resolve(record.id, "keep_b", "we changed our minds", actor="carol")
    first, second = engine.memories.get(a), engine.memories.get(b)
    assert (first.trust, first.superseded_by) == ("superseded", b)
    assert (second.trust, second.superseded_by, second.valid_to) == ("stated", None, None)
    actions = [e.action for e in engine.store.audit.history(b)]
    assert actions.count("supersede") == 1
    assert "unsupersede" in actions


def test_forgetting_a_side_closes_the_record(engine: Engine) -> None:
    a = _remember(engine, "Do not use pickle")
    b = _remember(engine, "Use pickle for caching")
    (record,), _ = engine.contradictions.listing()
    engine.memories.forget(a, confirm=True, actor="bob", reason="wrong")
    closed = engine.contradictions.get(record.id)
    assert closed.status == "closed"
    assert closed.closed_reason == f"forgotten: {a}"
    assert engine.memories.get(b).trust == "stated"
    with pytest.raises(Conflict, match="closed"):
        engine.contradictions.resolve(record.id, "keep_b", None, actor="bob")


def test_second_tier_failure_is_unknown_never_a_negative(engine: Engine) -> None:
    def broken(a: Memory, b: Memory) -> str:
        raise TimeoutError("the LLM did not answer")

    detector = Contradictions(engine.ctx, engine.belief, second_tier=broken)
    a = _remember(engine, "Do not use eval")
    memory = engine.memories.get(a)
    other = engine.memories.remember(
        Draft("Use eval for the config DSL", project="shop"), actor="x", allow_duplicate=True
    )
    (plain,), _ = engine.contradictions.listing()
    assert (plain.second_tier, plain.second_tier_note) == (
        "unknown",
        "no second-tier checker configured",
    )
    engine.contradictions.close(plain, "test reset", actor="test")
    vector = engine.store.memories.read_vector(other.key)
    (record,) = detector.on_remember(engine.memories.get(other.key), vector, actor="agent")
    assert record.a == memory.key
    assert record.status == "open"
    assert record.second_tier == "unknown"
    assert "did not answer" in record.second_tier_note


def test_editing_a_side_closes_a_record_that_no_longer_conflicts_and_flags_new_ones(
    engine: Engine,
) -> None:
    a = _remember(engine, "Do not use pickle")
    b = _remember(engine, "Use pickle for caching")
    (record,), _ = engine.contradictions.listing()
    edited = engine.memories.update(b, "Use msgpack for caching", actor="bob", reason="we switched")
    assert edited.trust == "stated"
    closed = engine.contradictions.get(record.id)
    assert (closed.status, closed.closed_reason) == (
        "closed",
        "the two memories no longer conflict (edited)",
    )
    assert engine.memories.get(a).trust == "stated"
    again = engine.memories.update(b, "Use pickle for caching session data", actor="bob")
    assert again.trust == "disputed"  # the pair was released by the close, so it is flagged anew
    (reopened,), total = engine.contradictions.listing()
    assert (total, reopened.a, reopened.b) == (1, a, b)
    assert reopened.id != record.id


def test_a_reinstated_side_is_checked_again(engine: Engine) -> None:
    a = _remember(engine, "Do not use pickle")
    b = _remember(engine, "Use pickle for caching")
    (record,), _ = engine.contradictions.listing()
    engine.lifecycle.archive(b, reason="out of date", actor="bob")
    # positive control: archiving closed it
    assert engine.contradictions.get(record.id).status == "closed"
    assert engine.memories.get(a).trust == "stated"
    engine.lifecycle.reinstate(b, reason="still relevant", actor="bob")  # re-checks on its own
    reopened = next(r for r in engine.contradictions.listing()[0] if r.status == "open")
    assert (reopened.a, reopened.b, reopened.status) == (a, b, "open")
    assert reopened.id != record.id
    assert engine.memories.get(a).trust == engine.memories.get(b).trust == "disputed"
    assert engine.contradictions.on_reinstate(b, actor="bob") == []  # recorded once


def test_a_pair_is_recorded_once_even_when_two_writers_race(engine: Engine) -> None:
    a = _remember(engine, "Do not use pickle")
    b = _remember(engine, "Use pickle for caching")
    (record,), _ = engine.contradictions.listing()
    first, second = engine.memories.get(a), engine.memories.get(b)
    found = polarity.conflict(first.content, second.content)
    assert found is not None
    # A second writer that read "no record yet" before the first one saved it.
    assert engine.contradictions.open(first, second, found, 0.9, actor="late") is None
    assert engine.contradictions.listing(status="all")[0] == [record]


def test_undoing_a_merge_archives_the_merged_memory(engine: Engine) -> None:
    a = _remember(engine, "Do not use pickle")
    b = _remember(engine, "Use pickle for caching")
    (record,), _ = engine.contradictions.listing()
    merged = engine.contradictions.resolve(
        record.id, "merge", None, actor="bob", content="Use pickle only for the internal cache"
    ).merged_key
    assert engine.memories.get(merged).state == "active"  # positive control
    done = engine.contradictions.resolve(record.id, "keep_a", "the merge was wrong", actor="carol")
    assert done.merged_key == ""
    retired = engine.memories.get(merged)
    assert (retired.state, retired.state_actor) == ("archived", "carol")
    assert "changed (was merge)" in (retired.state_reason or "")
    first, second = engine.memories.get(a), engine.memories.get(b)
    assert (first.trust, first.superseded_by) == ("stated", None)
    assert (second.trust, second.superseded_by) == ("superseded", a)
    assert [e.action for e in engine.store.audit.history(merged)][-1] == "archive"


def test_a_bad_merge_changes_nothing(engine: Engine) -> None:
    a = _remember(engine, "Do not use pickle")
    b = _remember(engine, "Use pickle for caching")
    (record,), _ = engine.contradictions.listing()
    engine.contradictions.resolve(record.id, "keep_a", None, actor="bob")
    with pytest.raises(InvalidInput, match="limit"):
        engine.contradictions.resolve(record.id, "merge", None, actor="bob", content="x" * 100_000)
    assert engine.contradictions.get(record.id).decision == "keep_a"
    assert engine.memories.get(b).superseded_by == a  # the previous decision was not undone
    assert "unsupersede" not in [e.action for e in engine.store.audit.history(b)]


@pytest.mark.both_backends
def test_the_similarity_gate_is_a_setting_and_global_memories_meet_every_project(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    engine: Engine,
) -> None:
    strict = Engine.open(
        make_settings(
            settings.data_dir,
            settings.valkey_port,
            key_prefix=settings.key_prefix,
            contradiction_threshold=0.99,
        ),
        client,
        embedder,
        clock=clock,
    )
    gate, duplicate = (
        engine.ctx.settings.contradiction_threshold,
        engine.ctx.settings.duplicate_threshold,
    )
    # 0.72 int8 / 0.74 fp32 (AVX2): 0.27 over the 0.45 gate
    assert_pair(embedder, "Do not use pickle", "Use pickle for caching", above=gate, below=0.99)
    rule_text, use_text = "Never use eval for the config", "Use eval for the config DSL"
    # 0.74 / 0.76: inside (0.45, 0.92) by 0.16 or more
    assert_pair(embedder, rule_text, use_text, above=gate, below=duplicate)
    strict.memories.remember(Draft("Do not use pickle", project="shop"), actor="a")
    quiet = strict.memories.remember(Draft("Use pickle for caching", project="shop"), actor="a")
    assert quiet.notes == ()  # similar, but below a 0.99 gate
    rule = engine.memories.remember(Draft(rule_text), actor="a").key  # global
    flagged = engine.memories.remember(Draft(use_text, project="shop"), actor="a")
    assert flagged.notes  # the default gate lets a global rule meet a project memory
    (record,) = [c for c in engine.contradictions.listing()[0] if rule in (c.a, c.b)]
    assert record.projects == ("global", "shop")


def test_changing_a_resolution_keeps_a_side_disputed_by_another_open_record(engine: Engine) -> None:
    a = _remember(engine, "Do not use pickle")
    b = _remember(engine, "Use pickle for caching")
    (first,), _ = engine.contradictions.listing()
    engine.contradictions.resolve(first.id, "keep_b", None, actor="bob")
    assert engine.memories.get(a).trust == "superseded"
    c = _remember(engine, "Never use pickle for caching")  # disputes b, not the superseded a
    (second,), _ = engine.contradictions.listing()
    assert (second.a, second.b) == (b, c)
    engine.contradictions.resolve(first.id, "keep_a", "pickle stays out", actor="bob")
    assert engine.memories.get(b).trust == "superseded"
    engine.contradictions.resolve(first.id, "not_a_contradiction", "different scopes", actor="bob")
    assert engine.memories.get(b).trust == "disputed"  # the record with c is still open
    assert engine.memories.get(a).trust == "stated"


def test_archived_superseded_and_context_memories_are_not_checked(engine: Engine) -> None:
    a = _remember(engine, "Do not use pickle")
    b = _remember(engine, "Use pickle for caching")
    (record,), _ = engine.contradictions.listing()
    engine.contradictions.resolve(record.id, "not_a_contradiction", "fine", actor="bob")
    gone = _remember(engine, "Pickle is not allowed for caching")
    assert engine.memories.get(gone).trust == "disputed"  # positive control: it conflicts with b
    (opened,), _ = engine.contradictions.listing()
    engine.contradictions.close(opened, "test reset", actor="test")
    engine.lifecycle.archive(gone, reason="obsolete", actor="bob")
    assert engine.contradictions.check(key=gone, actor="bob").opened == ()
    engine.projects.set("shop", actor="alice", description="Use pickle for caching in the shop")
    context = engine.memories.get(engine.projects.key("shop"))
    vector = engine.store.memories.read_vector(context.key)
    # near enough
    assert [other.key for other, _ in engine.contradictions.candidates(context, vector)] != []
    assert engine.contradictions.check(project="shop", actor="bob").opened == ()
    assert engine.memories.get(context.key).trust == "stated"
    assert {engine.memories.get(k).trust for k in (a, b)} == {"stated"}


def test_a_merged_memory_is_checked_like_any_new_statement(engine: Engine) -> None:
    _remember(engine, "Do not use pickle")
    # not "for caching": lemmatised, caching is cache, and the third statement would dispute it
    _remember(engine, "Use pickle for the session store")
    third = _remember(engine, "Never use pickle for the internal cache")
    # positive control: it conflicts with neither side
    assert engine.memories.get(third).trust == "stated"
    (record,), _ = engine.contradictions.listing()
    merged = engine.contradictions.resolve(
        record.id, "merge", None, actor="bob", content="Use pickle only for the internal cache"
    ).merged_key
    (opened,), total = engine.contradictions.listing()
    assert (total, opened.a, opened.b) == (1, third, merged)
    assert engine.memories.get(merged).trust == engine.memories.get(third).trust == "disputed"
    engine.contradictions.resolve(record.id, "keep_a", "no pickle at all", actor="bob")
    assert engine.contradictions.get(opened.id).closed_reason == f"archived: {merged}"
    assert engine.memories.get(third).trust == "stated"


def test_closing_a_record_is_audited_on_the_side_that_still_exists(engine: Engine) -> None:
    a = _remember(engine, "Do not use pickle")
    b = _remember(engine, "Use pickle for caching")
    (record,), _ = engine.contradictions.listing()
    engine.memories.forget(a, confirm=True, actor="alice", reason="wrong")
    assert engine.contradictions.get(record.id).status == "closed"
    closes = [e for e in engine.store.audit.history(b) if e.action == "close_contradiction"]
    assert [(e.actor, e.details["contradiction"]) for e in closes] == [("alice", record.id)]
    assert engine.memories.get(b).trust == "stated"
    assert "close_contradiction" not in [e.action for e in engine.store.audit.history(a)]
    # positive control: a has a trail
    assert [e.action for e in engine.store.audit.history(a)][-1] == "forget"


def test_check_names_a_memory_it_could_not_check_for_want_of_a_vector(
    engine: Engine, clock: ManualClock
) -> None:
    a = _remember(engine, "Do not use pickle")
    checked = engine.contradictions.check(key=a, actor="agent")
    assert (checked.examined, checked.without_vector) == (1, ())  # positive control: a has a vector
    bare = Memory(
        key=engine.store.memories.new_key("knowledge", "7YYYYYYYYYYYYYYYYYYYYYYYYY"),
        content="Use pickle for caching",
        namespace="knowledge",
        project="shop",
        created_at=clock.now(),
        updated_at=clock.now(),
    )
    engine.store.memories.write(bare, None, SETUP)  # e.g. a row written without its vector
    report = engine.contradictions.check(key=bare.key, actor="agent")
    assert (report.examined, report.opened, report.without_vector) == (1, (), (bare.key,))
    assert report.public()["without_vector"] == [bare.key]
