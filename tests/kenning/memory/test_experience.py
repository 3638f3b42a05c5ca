"""Experience weights, the graveyard (warnings on recall, across projects
and processes), summaries."""

from __future__ import annotations

import pytest

from kenning.core import validation
from kenning.core.clock import ManualClock
from kenning.core.errors import InvalidInput
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.experience import Approach, Report
from kenning.memory.listing import Listing
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.memory.scoring import experience_weight
from kenning.runtime.embedding import Embedder
from kenning.store import connect


@pytest.mark.parametrize(
    ("effort", "outcome", "weight"),
    [
        (1, "succeeded", 1.0),
        (2, "succeeded", 1.1),
        (3, "succeeded", 1.25),
        (4, "succeeded", 1.5),
        (5, "succeeded", 1.8),
        (1, "pivoted", 0.7),
        (5, "pivoted", 1.26),
        (1, "abandoned", 0.1),
        (5, "abandoned", 0.1),
    ],
)
def test_effort_amplifies_wins_never_failures(effort: int, outcome: str, weight: float) -> None:
    assert experience_weight(effort, outcome) == pytest.approx(weight)


def remember(engine: Engine, text: str, project: str = "alpha") -> str:
    return engine.memories.remember(Draft(text, project=project), actor="agent").key


def test_record_experience_sets_weight_graveyard_and_audit(engine: Engine) -> None:
    key = remember(engine, "Migrated the job queue to Celery after two failed attempts.")
    report = Report(
        effort=3,
        outcome="succeeded",
        iterations=3,
        breakthrough="use acks_late",
        gotchas=["prefetch multiplier"],
        abandoned_approaches=[Approach("RQ", "library", "no priorities")],
    )
    result = engine.experience.record_experience(key, report, actor="agent")
    assert result.experience_weight == pytest.approx(1.25)
    assert result.suppressed == []  # effort 3 is below the auto-suppression effort
    got = engine.experience.get_experience(key)
    assert got.experience is not None
    assert got.experience["breakthrough"] == "use acks_late"
    assert got.experience["abandoned_approaches"] == [
        {"name": "RQ", "type": "library", "reason": "no priorities"}
    ]
    assert engine.memories.get(key).experience_weight == pytest.approx(1.25)
    assert engine.store.audit.history(key)[-1].action == "record_experience"
    warned = engine.experience.warn_if_abandoned("should we use rq for the queue?")
    assert [(w.name, w.key, w.effort) for w in warned] == [("RQ", key, 3)]


def test_invalid_reports_are_refused(engine: Engine) -> None:
    key = remember(engine, "Some work happened.")
    with pytest.raises(InvalidInput, match="effort"):
        engine.experience.record_experience(key, Report(effort=6, outcome="succeeded"), actor="a")
    with pytest.raises(InvalidInput, match="outcome"):
        engine.experience.record_experience(key, Report(effort=2, outcome="won"), actor="a")
    with pytest.raises(InvalidInput, match="approach type"):
        engine.experience.record_experience(
            key,
            Report(effort=2, outcome="pivoted", abandoned_approaches=[Approach("x", "framework")]),
            actor="a",
        )


def test_graveyard_warns_first_across_projects_by_whole_word(engine: Engine) -> None:
    logged = engine.experience.log_abandoned(
        Approach("Go", "library", "no generics for our codegen"),
        effort=2,
        project="project-a",
        actor="agent",
    )
    remember(engine, "Our search page calls the Google custom search API.", project="project-b")
    hit = engine.recaller.recall(
        RecallRequest("should we rewrite the worker in go?", projects=["project-b"])
    )
    assert [w["name"] for w in hit.warnings] == ["Go"]
    assert hit.warnings[0]["memory"] == logged.key
    assert hit.warnings[0]["project"] == "project-a"
    assert logged.key not in [h.memory.key for h in hit.hits]  # a warning never takes a result slot
    miss = engine.recaller.recall(
        RecallRequest("how does the google search page work?", projects=["project-b"])
    )
    assert miss.warnings == ()
    assert miss.hits  # positive control: the recall itself found something
    assert hit.public()["warnings"] == list(hit.warnings)
    assert next(iter(hit.public())) == "warnings"


def test_graveyard_is_shared_across_processes(
    engine: Engine, settings: Settings, embedder: Embedder, clock: ManualClock
) -> None:
    """A second engine on its own connection pool (as another process would
    have) sees the same graveyard."""
    other_client = connect(settings)
    other = Engine.open(settings, other_client, embedder, clock=clock)
    assert other.experience.warn_if_abandoned("try mongoengine again") == []
    engine.experience.log_abandoned(
        Approach("mongoengine", "library", "no async"), effort=2, project="p", actor="agent"
    )
    assert [w.name for w in other.experience.warn_if_abandoned("try mongoengine again")] == [
        "mongoengine"
    ]
    other_client.close()  # type: ignore[no-untyped-call]


def test_forgotten_and_archived_records_stop_warning(engine: Engine) -> None:
    gone = engine.experience.log_abandoned(
        Approach("Kafka", "service", "too heavy"), effort=2, project="p", actor="a"
    ).key
    archived = engine.experience.log_abandoned(
        Approach("Pulsar", "service", "no ops team"), effort=2, project="p", actor="a"
    ).key
    assert len(engine.experience.warn_if_abandoned("kafka or pulsar?")) == 2  # positive control
    engine.lifecycle.forget(gone, confirm=True, actor="a", reason="test")
    engine.lifecycle.archive(archived, reason="obsolete", actor="a")
    assert engine.experience.warn_if_abandoned("kafka or pulsar?") == []


def test_a_record_naming_several_approaches_is_read_once_per_warning(engine: Engine) -> None:
    key = engine.memories.remember(
        Draft("Background jobs: tried two queues before settling on RQ.", project="p"), actor="a"
    ).key
    engine.experience.record_experience(
        key,
        Report(
            effort=2,
            outcome="abandoned",
            abandoned_approaches=(
                Approach("Celery", "library", "too heavy"),
                Approach("Dramatiq", "library", "no scheduler"),
            ),
        ),
        actor="a",
    )
    stats = engine.ctx.store.client
    before = int(stats.info("commandstats")["cmdstat_hgetall"]["calls"])  # type: ignore[index]
    warned = engine.experience.warn_if_abandoned("celery or dramatiq?")
    after = int(stats.info("commandstats")["cmdstat_hgetall"]["calls"])  # type: ignore[index]
    assert sorted((w.name, w.key) for w in warned) == [("Celery", key), ("Dramatiq", key)]
    assert after - before == 3  # one entry hash per matched name, and the recording memory once


def test_a_longest_allowed_reason_still_suppresses_at_high_effort(engine: Engine) -> None:
    reason = "r" * validation.MAX_REASON
    logged = engine.experience.log_abandoned(
        Approach("Beanstalkd", "service", reason), effort=5, project="p", actor="a"
    )
    assert logged.suppressed == ["beanstalkd"]
    (rule,) = engine.suppressions.list_suppressions()
    assert rule.suppression.reason.endswith(f" (recorded in {logged.key})")
    assert len(rule.suppression.reason) == validation.MAX_REASON


def test_experience_summary(engine: Engine) -> None:
    win = remember(
        engine, "Fixed the flaky upload test by pinning the event loop policy.", project="s"
    )
    easy = remember(engine, "Renamed the settings module.", project="s")
    engine.experience.record_experience(
        win, Report(effort=5, outcome="succeeded", breakthrough="loop policy"), actor="a"
    )
    engine.experience.record_experience(easy, Report(effort=1, outcome="succeeded"), actor="a")
    dead = engine.experience.log_abandoned(
        Approach("pytest-xdist", "tool", "shared Valkey port"), effort=3, project="s", actor="a"
    ).key
    remember(engine, "Unrelated project note.", project="t")
    summary = engine.experience.experience_summary("s")
    assert summary.recorded == 3
    assert summary.average_effort == pytest.approx(3.0)
    assert summary.outcomes == {"succeeded": 2, "pivoted": 0, "abandoned": 1}
    assert summary.most_effortful[0]["key"] == win
    assert [g["memory"] for g in summary.graveyard] == [dead]
    assert summary.top_breakthroughs == [{"key": win, "effort": 5, "breakthrough": "loop policy"}]
    assert engine.experience.experience_summary("t").recorded == 0


def test_effortful_success_outranks_an_equally_similar_abandonment(engine: Engine) -> None:
    text = "Parsing the vendor CSV export with a streaming reader to keep memory flat."
    won = engine.memories.remember(Draft(text, project="c"), actor="a").key
    lost = engine.memories.remember(
        Draft(text + " ", project="c"), actor="a", allow_duplicate=True
    ).key
    engine.experience.record_experience(won, Report(effort=4, outcome="succeeded"), actor="a")
    engine.experience.record_experience(lost, Report(effort=4, outcome="abandoned"), actor="a")
    hits = engine.recaller.recall(
        RecallRequest("how do we parse the vendor csv?", projects=["c"])
    ).hits
    by_key = {h.memory.key: h for h in hits}
    assert by_key[won].similarity == pytest.approx(by_key[lost].similarity, abs=1e-3)
    assert hits[0].memory.key == won
    assert by_key[won].score > by_key[lost].score * 10


def test_reindex_restores_the_graveyard_of_a_memory_written_directly(engine: Engine) -> None:
    key = engine.experience.log_abandoned(
        Approach("Sanic", "library", "plugin gaps"), effort=2, project="r", actor="a"
    ).key
    memory = engine.memories.get(key)
    engine.store.graveyard.remove("sanic", key)
    engine.experience.registry.remove("r", key)
    # control: the index lost it
    assert engine.experience.warn_if_abandoned("what about sanic?") == []
    engine.experience.reindex(memory)
    assert [w.key for w in engine.experience.warn_if_abandoned("what about sanic?")] == [key]
    assert engine.experience.experience_summary("r").recorded == 1


@pytest.mark.parametrize(
    ("name", "effort", "match"),
    [
        ("celery", 0, "effort"),
        ("celery", 6, "effort"),
        ("!!!", 4, "approach name"),
        ("the", 4, "approach name"),
        ("", 2, "approach name"),
        ("one two three four five six seven eight nine", 2, "approach name"),
    ],
)
def test_bad_abandonments_store_nothing(engine: Engine, name: str, effort: int, match: str) -> None:
    with pytest.raises(InvalidInput, match=match):
        engine.experience.log_abandoned(
            Approach(name, "library", "r"), effort=effort, project="alpha", actor="a"
        )
    assert engine.memories.list(Listing()).total == 0
    engine.experience.log_abandoned(
        Approach("celery", "library", "r"), effort=2, project="alpha", actor="a"
    )
    assert engine.memories.list(Listing()).total == 1  # positive control: valid input is stored


def test_a_bad_approach_name_leaves_the_memory_untouched(engine: Engine) -> None:
    key = remember(engine, "Moved the job queue off the old broker.")
    bad = Report(effort=5, outcome="pivoted", abandoned_approaches=[Approach("...", "tool", "r")])
    with pytest.raises(InvalidInput, match="approach name"):
        engine.experience.record_experience(key, bad, actor="a")
    memory = engine.memories.get(key)
    assert (memory.experience_weight, memory.metadata.get("experience")) == (1.0, None)
    assert engine.suppressions.list_suppressions() == []


def test_experience_summary_never_quotes_a_suppressed_memory(engine: Engine) -> None:
    key = remember(engine, "Tuned the Tortoise ORM pool for the reports service.")
    engine.experience.record_experience(
        key, Report(effort=3, outcome="succeeded", breakthrough="pool of 4"), actor="a"
    )
    before = engine.experience.experience_summary("alpha")
    assert [m["key"] for m in before.most_effortful] == [key]  # positive control
    assert [b["key"] for b in before.top_breakthroughs] == [key]
    engine.suppressions.suppress("tortoise", "dropped", actor="person")
    after = engine.experience.experience_summary("alpha")
    assert (after.most_effortful, after.top_breakthroughs) == ([], [])
    assert after.recorded == 1  # counted, never quoted
