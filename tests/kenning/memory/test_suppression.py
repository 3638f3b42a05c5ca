"""Suppression: whole-word matching, preview, rewordings hidden, the abandonment record exempt."""

from __future__ import annotations

import pytest

from kenning.core.errors import InvalidInput, NotFound
from kenning.core.models import Memory
from kenning.engine import Engine
from kenning.memory.experience import Approach
from kenning.memory.lifecycle import ProjectPreview
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.memory.suppression import Suppression, Suppressions, hidden_by


def remember(engine: Engine, text: str, project: str = "alpha") -> str:
    return engine.memories.remember(Draft(text, project=project), actor="agent").key


def keys(engine: Engine, text: str) -> list[str]:
    return [h.memory.key for h in engine.recaller.recall(RecallRequest(text, top_k=10)).hits]


def test_hidden_by_is_whole_word_and_honours_exemptions() -> None:
    rule = Suppression(term="mongo", reason="r", actor="a", at=0.0, exempt=("k:exempt",))
    assert hidden_by(Memory(key="k1", content="We store events in Mongo."), [rule]) == ["mongo"]
    assert hidden_by(Memory(key="k2", content="We store events in MongoDB."), [rule]) == []
    assert hidden_by(Memory(key="k:exempt", content="Mongo was dropped."), [rule]) == []
    assert hidden_by(Memory(key="k3", content="Mongo"), []) == []


def test_preview_counts_and_samples_without_suppressing(engine: Engine) -> None:
    a = remember(engine, "The billing service talks to Stripe through a webhook queue.")
    b = remember(engine, "Stripe test keys live in the vault under billing/test.")
    remember(engine, "The stripes on the dashboard header are a CSS gradient.")
    preview = engine.suppressions.suppress("Stripe", "vendor dropped", actor="person", preview=True)
    assert (preview.status, preview.would_hide) == ("preview", 2)
    assert {s["key"] for s in preview.sample} == {a, b}
    assert engine.suppressions.list_suppressions() == []
    assert a in keys(engine, "how does billing talk to stripe?")
    engine.suppressions.suppress("vault", "moved to SOPS", actor="person")
    again = engine.suppressions.suppress("Stripe", "vendor dropped", actor="person", preview=True)
    # b is hidden by 'vault'
    assert (again.would_hide, [s["key"] for s in again.sample]) == (2, [a])


def test_suppressed_term_hides_rewordings_written_later(engine: Engine) -> None:
    first = remember(engine, "We cache rendered pages in Varnish in front of the app.")
    assert first in keys(engine, "what caches the rendered pages?")  # positive control
    result = engine.suppressions.suppress("varnish", "replaced by the CDN", actor="person")
    assert (result.status, result.would_hide) == ("suppressed", 1)
    assert first not in keys(engine, "what caches the rendered pages?")
    later = remember(engine, "Page caching: a Varnish layer sits before the application servers.")
    assert engine.memories.get(later).content.startswith("Page caching")  # it exists
    assert later not in keys(engine, "what caches the rendered pages?")
    listed = engine.suppressions.list_suppressions()
    assert [
        (s.suppression.term, s.suppression.reason, s.suppression.actor, s.hides) for s in listed
    ] == [("varnish", "replaced by the CDN", "person", 2)]
    engine.suppressions.unsuppress("Varnish", actor="person")
    assert {first, later} <= set(keys(engine, "what caches the rendered pages?"))


def test_terms_are_validated_and_unknown_unsuppress_is_not_found(engine: Engine) -> None:
    with pytest.raises(InvalidInput):
        engine.suppressions.suppress("the", "stop word", actor="a")
    with pytest.raises(InvalidInput, match="reason"):
        engine.suppressions.suppress("kafka", None, actor="a")
    with pytest.raises(NotFound):
        engine.suppressions.unsuppress("never-suppressed", actor="a")
    engine.suppressions.suppress("kafka", "too heavy", actor="a")
    with pytest.raises(InvalidInput, match="reason"):
        engine.suppressions.unsuppress("kafka", actor="a", reason="x" * 10_000)
    # still suppressed
    assert [s.suppression.term for s in engine.suppressions.list_suppressions()] == ["kafka"]
    assert [e.action for e in engine.store.audit.recent(action="unsuppress")] == []


def test_high_effort_abandonment_suppresses_the_name_but_not_its_record(engine: Engine) -> None:
    old = remember(engine, "Plan: move the ORM layer to Tortoise for async support.")
    assert old in keys(engine, "should we use tortoise for the async ORM?")  # positive control
    logged = engine.experience.log_abandoned(
        Approach("Tortoise", "library", "migrations broke twice"),
        effort=4,
        project="alpha",
        actor="agent",
    )
    assert logged.suppressed == ["tortoise"]
    rule = engine.suppressions.list_suppressions()[0]
    assert rule.suppression.auto is True
    assert logged.key in rule.suppression.reason
    assert rule.suppression.exempt == (logged.key,)
    again = remember(engine, "Idea: Tortoise ORM could give us async models.")
    result = engine.recaller.recall(
        RecallRequest("should we use tortoise for the async ORM?", top_k=10)
    )
    found = [h.memory.key for h in result.hits]
    assert old not in found
    assert again not in found
    assert logged.key in found  # the record of why it died stays findable
    assert result.warnings[0]["memory"] == logged.key
    engine.suppressions.unsuppress("tortoise", actor="person", reason="control")
    # control: hidden only by it
    assert {old, again} <= set(keys(engine, "should we use tortoise for the async ORM?"))


def test_low_effort_abandonment_does_not_suppress(engine: Engine) -> None:
    logged = engine.experience.log_abandoned(
        Approach("Dramatiq", "library", "meh"), effort=3, project="alpha", actor="agent"
    )
    assert logged.suppressed == []
    assert engine.suppressions.list_suppressions() == []
    hard = engine.experience.log_abandoned(
        Approach("Huey", "library", "meh"), effort=4, project="alpha", actor="agent"
    )
    assert hard.suppressed == ["huey"]  # positive control: one effort point more suppresses


def test_visible_filters_lists_for_agents(engine: Engine) -> None:
    a = remember(engine, "Traefik terminates TLS for the cluster.")
    b = remember(engine, "Caddy terminates TLS for the docs site.")
    engine.suppressions.suppress("traefik", "migrated", actor="p")
    memories = [engine.memories.get(a), engine.memories.get(b)]
    assert [m.key for m in engine.suppressions.visible(memories)] == [b]


def test_suppressing_twice_keeps_the_first_reason_and_adds_exemptions(engine: Engine) -> None:
    engine.suppressions.suppress("kafka", "too heavy", actor="person")
    again = engine.suppressions.suppress("Kafka", "other reason", actor="agent", exempt=("k1",))
    assert (again.status, again.reason) == ("already_suppressed", "too heavy")
    listed = engine.suppressions.list_suppressions()
    assert [(s.suppression.reason, s.suppression.exempt) for s in listed] == [
        ("too heavy", ("k1",))
    ]
    audited = engine.store.audit.recent(action="suppress")
    assert [(e.actor, e.details.get("exempt_added")) for e in audited] == [
        ("agent", ["k1"]),
        ("person", None),
    ]
    engine.suppressions.suppress("kafka", "again", actor="agent", exempt=("k1",))
    # nothing changed, nothing audited
    assert len(engine.store.audit.recent(action="suppress")) == 2


def test_agent_facing_answers_never_quote_a_suppressed_memory(engine: Engine) -> None:
    hidden = remember(engine, "Traefik terminates TLS for the cluster ingress.", project="edge")
    shown = remember(engine, "Caddy terminates TLS for the docs site.", project="edge")
    engine.recaller.recall(RecallRequest("who terminates TLS for the cluster ingress?", top_k=10))
    # positive controls: before the suppression every answer names the memory
    before = engine.recall_log.why_did_you_mention("Traefik")
    assert ([m["key"] for m in before.memories], before.mentions[0]["key"]) == ([hidden], hidden)
    assert [m["key"] for m in engine.recall_log.why_did_you_mention(hidden).memories] == [hidden]
    assert hidden in [
        c.key for c in engine.lifecycle.candidates("archive", "Traefik TLS ingress").found
    ]
    before_preview = engine.lifecycle.deprioritise_project(
        "edge", confirm=False, actor="a", reason=None
    )
    assert isinstance(before_preview, ProjectPreview)
    assert hidden in [s["key"] for s in before_preview.sample]
    engine.suppressions.suppress("traefik", "migrated off it", actor="person")
    why = engine.recall_log.why_did_you_mention("Traefik")
    assert (why.memories, why.mentions) == ([], [])
    assert hidden not in [m["key"] for m in engine.recall_log.why_did_you_mention(hidden).memories]
    offered = engine.lifecycle.candidates("archive", "Traefik TLS ingress").found
    assert hidden not in [c.key for c in offered]
    preview = engine.lifecycle.deprioritise_project("edge", confirm=False, actor="a", reason=None)
    assert isinstance(preview, ProjectPreview)
    assert preview.would_affect == 2  # counted, never quoted
    assert [s["key"] for s in preview.sample] == [shown]


def test_active_read_with_a_recalls_look_up_is_the_same_list(engine: Engine) -> None:
    engine.suppressions.suppress("varnish", "replaced by the CDN", actor="person", exempt=("k:1",))
    # a recall's one round trip reads them with its phrases
    reply, _ = engine.store.look_up(["varnish"])
    assert Suppressions.parse_active(reply) == engine.suppressions.active()
    assert [(s.term, s.exempt) for s in Suppressions.parse_active(reply)] == [("varnish", ("k:1",))]


def test_a_recall_names_what_suppression_hid_for_a_person_but_not_in_public(engine: Engine) -> None:
    key = remember(engine, "We deploy the billing service with Ansible playbooks")
    request = RecallRequest("how do we deploy the billing service?")
    assert [h.memory.key for h in engine.recaller.recall(request).hits] == [key]  # positive control
    engine.suppressions.suppress("ansible", "moved to Nomad", actor="person")
    result = engine.recaller.recall(request)
    assert result.hits == ()
    assert result.hidden == ((key, result.hidden[0][1], ("ansible",)),)
    assert result.hidden[0][1] >= engine.ctx.settings.relevance_floor
    assert "hidden" not in result.public()  # an agent never reads what a suppression hid


def test_lifting_says_what_comes_back_and_writes_nothing(engine: Engine) -> None:
    logged = engine.experience.log_abandoned(
        Approach("Celery", "library", "too heavy for two jobs"),
        effort=5,
        project="alpha",
        actor="a",
    )
    back = remember(engine, "The nightly report runs as a Celery task on the worker box.")
    also = remember(engine, "Celery beat and the Redis broker are both pinned.")
    remember(engine, "Celery in the beta project is fine.", project="beta")  # out of its projects
    engine.suppressions.suppress("redis broker", "moved to valkey", actor="person")
    lifting = engine.suppressions.lifting("Celery")
    public = lifting.public()
    assert (public["term"], public["auto"], public["source_key"]) == ("celery", True, logged.key)
    # `also` is hidden by the other suppression too: lifting this one does not bring it back
    assert (lifting.brings_back, lifting.at_least) == (1, False)
    assert [s["key"] for s in lifting.sample] == [back]
    assert also not in {s["key"] for s in lifting.sample}
    assert {s.suppression.term for s in engine.suppressions.list_suppressions()} == {
        "celery",
        "redis broker",
    }  # nothing was lifted
    engine.suppressions.unsuppress("redis broker", actor="person", reason="test")
    assert engine.suppressions.lifting("celery").brings_back == 2  # the positive control
    with pytest.raises(NotFound):
        engine.suppressions.lifting("kafka")


def test_an_abandonment_hides_the_recommendation_not_the_history(engine: Engine) -> None:
    old = remember(engine, "We use Celery for background jobs.")
    replaced = remember(engine, "We replaced Celery with arq for background jobs.")
    why = remember(engine, "Celery was dropped because its workers leaked memory under load.")
    engine.experience.log_abandoned(
        Approach("Celery", "library", "workers leaked memory"),
        effort=4,
        project="alpha",
        actor="agent",
    )
    found = engine.recaller.recall(RecallRequest("what do we use for background jobs?"))
    shown = [h.memory.key for h in found.hits]
    assert replaced in shown  # the replacement stays visible
    assert old not in shown  # the recommendation is hidden
    assert dict(found.suppressed) == {"celery": 1}
    assert any("record its replacement or why it was dropped" in n for n in found.notes)
    assert why in keys(engine, "why did we drop Celery?")
    # a person's own suppression of the term hides the history too: only an abandonment spares it
    engine.suppressions.unsuppress("celery", actor="person", reason="control")
    engine.suppressions.suppress("celery", "no longer discussed", actor="person")
    assert replaced not in keys(engine, "what do we use for background jobs?")
