"""Project context: one memory per project in the `project` namespace,
re-embedded only when it changes."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kenning.core.errors import InvalidInput, NotFound
from kenning.curation.projects import ProjectContext
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest


def vector(engine: Engine, key: str) -> np.ndarray[Any, Any]:
    stored = engine.store.memories.read_vector(key)
    assert stored is not None
    return stored


def test_render_lists_only_the_fields_that_are_set() -> None:
    context = ProjectContext(name="shop", description="An online shop", stack=("python", "valkey"))
    assert context.render() == "Project shop.\nDescription: An online shop\nStack: python, valkey"
    assert ProjectContext(name="bare").render() == "Project bare."


def test_set_get_and_recall_a_project_context(engine: Engine) -> None:
    context, status = engine.projects.set(
        "Shop-API",
        description="Checkout and payments service",
        stack=["python", "stripe"],
        conventions="ruff, mypy strict",
        actor="alice",
    )
    assert status == "created"
    assert context.name == "shop-api"
    got = engine.projects.get("shop-api")
    assert got == context
    memory = engine.memories.get(context.key)
    assert (memory.namespace, memory.kind, memory.project, memory.actor) == (
        "project",
        "context",
        "shop-api",
        "alice",
    )
    hits = engine.recaller.recall(
        RecallRequest(query="which service handles payments?", namespaces=["project"])
    ).hits
    assert hits[0].memory.key == context.key


def test_setting_again_changes_given_fields_and_keeps_the_rest(engine: Engine) -> None:
    first, _ = engine.projects.set("shop", description="Shop", stack=["python"], actor="alice")
    second, status = engine.projects.set("shop", state="Beta", actor="bob")
    assert status == "updated"
    assert second.key == first.key
    assert (second.description, second.stack, second.state) == ("Shop", ("python",), "Beta")
    same, status = engine.projects.set("shop", description="Shop", actor="bob")
    assert status == "unchanged"
    assert same == second
    history = engine.store.audit.history(first.key)
    assert [(e.action, e.actor) for e in history] == [
        ("project_context", "alice"),
        ("project_context", "bob"),
    ]
    assert history[1].details["changed"] == ["state"]


def test_update_state_re_embeds_only_when_the_state_changes(engine: Engine) -> None:
    context, _ = engine.projects.set("shop", description="Shop", state="Alpha", actor="alice")
    before = vector(engine, context.key)
    updated, status = engine.projects.update_state("shop", "Released to customers", actor="alice")
    after = vector(engine, context.key)
    assert status == "updated"
    assert updated.state == "Released to customers"
    assert not np.allclose(before, after)
    _, status = engine.projects.update_state("shop", "Released to customers", actor="alice")
    assert status == "unchanged"
    assert np.array_equal(after, vector(engine, context.key))
    events = engine.store.audit.history(context.key)
    assert [e.details["re_embedded"] for e in events] == [True, True]


def test_a_change_that_renders_the_same_text_is_written_but_keeps_its_vector(
    engine: Engine,
) -> None:
    context, _ = engine.projects.set("shop", stack=["python", "valkey"], actor="alice")
    before = vector(engine, context.key)
    # same "Stack:" line
    changed, status = engine.projects.set("shop", stack=["python, valkey"], actor="alice")
    assert status == "updated"
    assert changed.stack == ("python, valkey",)
    assert engine.memories.get(context.key).content == context.render()
    assert np.array_equal(before, vector(engine, context.key))  # kept, not dropped, not recomputed
    assert [e.details["re_embedded"] for e in engine.store.audit.history(context.key)] == [
        True,
        False,
    ]


def test_changing_the_stack_re_embeds(engine: Engine) -> None:
    context, _ = engine.projects.set("shop", description="Shop", actor="alice")
    before = vector(engine, context.key)
    engine.projects.set("shop", stack=["go"], actor="alice")
    assert not np.array_equal(before, vector(engine, context.key))


def test_list_projects_and_counts(engine: Engine) -> None:
    engine.projects.set("alpha", description="First", actor="alice")
    engine.projects.set("beta", description="Second", actor="alice")
    engine.memories.remember(Draft(content="Beta uses Postgres 16", project="beta"), actor="alice")
    contexts, total = engine.projects.all()
    assert total == 2
    assert sorted(c.name for c in contexts) == ["alpha", "beta"]
    assert engine.projects.memory_counts("beta") == {
        "episodic": 0,
        "knowledge": 1,
        "preference": 0,
        "project": 1,
        "skill": 0,
    }
    described = engine.projects.describe("beta")
    assert (described.project.name, described.project.description) == ("beta", "Second")
    assert described.memories["knowledge"] == 1


def test_bad_input_and_missing_projects(engine: Engine) -> None:
    with pytest.raises(NotFound, match="has no context yet"):
        engine.projects.get("nowhere")
    with pytest.raises(NotFound, match="has no context yet"):
        engine.projects.update_state("nowhere", "x", actor="alice")
    with pytest.raises(NotFound):  # the failed update created nothing
        engine.projects.get("nowhere")
    with pytest.raises(InvalidInput, match="not allowed"):
        engine.projects.set("Bad Name!", description="x", actor="alice")
    with pytest.raises(InvalidInput, match="limit is 5,000"):
        engine.projects.set("shop", description="x" * 5_001, actor="alice")
    with pytest.raises(InvalidInput, match="stack"):
        engine.projects.set("shop", stack=["x"] * 31, actor="alice")
    engine.projects.set("shop", description="ok", actor="alice")
    with pytest.raises(InvalidInput, match="state is empty"):
        engine.projects.update_state("shop", " ", actor="alice")
    assert engine.projects.all()[1] == 1
