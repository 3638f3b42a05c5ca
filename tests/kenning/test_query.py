"""The query builder: pure string tests, then injection attempts run against the real engine."""

from __future__ import annotations

import pytest

from kenning import query
from kenning.engine import Engine
from kenning.errors import InvalidInput
from kenning.memory import Draft
from kenning.models import Memory
from kenning.query import Search

HOSTILE = ["a}", "a|b", "@project:{b}", "*", "(a)", '"a"', "a b", "ünï", "a\\", "-a", "a=>[KNN 1 @vector $vec]",
           "'", "~a", "%a%", "a}|{b", "$vec"]


def test_escape_leaves_alphanumerics_alone() -> None:
    assert query.escape("abc_123") == "abc_123"


@pytest.mark.parametrize("value", HOSTILE)
def test_escape_backslashes_every_special_character(value: str) -> None:
    escaped = query.escape(value)
    unescaped = [ch for i, ch in enumerate(escaped) if not ch.isalnum() and ch != "_"
                 and (i == 0 or escaped[i - 1] != "\\") and ch != "\\"]
    assert unescaped == []


@pytest.mark.parametrize("value", ["", "a\nb", "a\x00"])
def test_escape_refuses_empty_and_control_values(value: str) -> None:
    with pytest.raises(InvalidInput):
        query.escape(value)


def test_tag_numeric_and_knn_shapes() -> None:
    assert query.tag("project", ["my-proj.v2"]) == "@project:{my\\-proj\\.v2}"
    assert query.numeric("created_at", 1.0, None) == "@created_at:[1.0 +inf]"
    assert query.numeric("created_at", None, 2.0, exclusive_high=True) == "@created_at:[-inf (2.0]"
    search = Search(index="i", clauses=(query.tag("state", ["active"]),), knn=5, vector=b"\0" * 4)
    args = search.args()
    assert args[2] == "(@state:{active})=>[KNN 5 @vector $vec EF_RUNTIME $ef AS distance]"
    assert args[args.index("SORTBY") + 1] == "distance"
    assert args[-2:] == ["DIALECT", "2"]


def test_knn_without_vector_is_refused() -> None:
    with pytest.raises(InvalidInput):
        Search(index="i", knn=3).args()


def test_bad_field_name_is_refused() -> None:
    with pytest.raises(InvalidInput):
        query.tag("project} @x:{", ["a"])


def _project_hits(engine: Engine, values: list[str]) -> set[str]:
    search = Search(index=engine.ctx.index("knowledge"), clauses=(query.tag("project", values),),
                    return_fields=("project", "created_at"), limit=100)
    return {h.memory.project for h in engine.store.memories.search(search).hits}


def _seed(engine: Engine) -> None:
    for project in ("alpha", "beta", "my-proj.v2"):
        engine.memories.remember(Draft(f"memory of {project} about caching", project=project), actor="t")


def test_hyphen_and_dot_values_filter_exactly(engine: Engine) -> None:
    _seed(engine)
    assert _project_hits(engine, ["my-proj.v2"]) == {"my-proj.v2"}
    assert _project_hits(engine, ["alpha", "beta"]) == {"alpha", "beta"}


@pytest.mark.parametrize("hostile", ["alpha}|@project:{beta", "alpha|beta", "*", "alpha} | {beta", "(alpha|beta)",
                                     "alpha\\}|{beta", "beta*", "\"beta\"", "bet?", "ünï} -@project:{x"])
def test_hostile_values_cannot_widen_a_filter(engine: Engine, hostile: str) -> None:
    _seed(engine)
    assert _project_hits(engine, ["beta"]) == {"beta"}  # positive control: beta exists and is found
    assert _project_hits(engine, [hostile]) == set()


def test_hostile_project_names_are_refused_at_the_front(engine: Engine) -> None:
    for hostile in HOSTILE:
        with pytest.raises(InvalidInput, match="project name"):
            engine.memories.remember(Draft("x", project=hostile), actor="t")


def test_hostile_tags_are_refused(engine: Engine) -> None:
    for hostile in ["a}", "a|b", "a b", "ünï", "*", ""]:
        with pytest.raises(InvalidInput, match="tag"):
            engine.memories.remember(Draft("x", tags=[hostile]), actor="t")


def test_tag_filter_with_punctuation_round_trips(engine: Engine) -> None:
    stored = engine.memories.remember(Draft("CI runs on push", tags=["ci/cd", "c++", "v1.2"]), actor="t")
    search = Search(index=engine.ctx.index("knowledge"), clauses=(query.tag("tags", ["ci/cd"]),),
                    return_fields=("created_at",), limit=10)
    keys = [h.memory.key for h in engine.store.memories.search(search).hits]
    assert keys == [stored.key]
    memory: Memory = engine.memories.get(stored.key)
    assert memory.tags == ("ci/cd", "c++", "v1.2")
