"""The query builder: pure string tests, then injection attempts run against the real engine."""

from __future__ import annotations

import pytest

from kenning.core import query
from kenning.core.errors import InvalidInput
from kenning.core.models import Memory
from kenning.core.query import Search
from kenning.core.schema import NAMESPACES
from kenning.engine import Engine
from kenning.memory.memories import Draft

HOSTILE = [
    "a}",
    "a|b",
    "@project:{b}",
    "*",
    "(a)",
    '"a"',
    "a b",
    "ünï",
    "a\\",
    "-a",
    "a=>[KNN 1 @vector $vec]",
    "'",
    "~a",
    "%a%",
    "a}|{b",
    "$vec",
]


def test_escape_leaves_alphanumerics_alone() -> None:
    assert query.escape("abc_123") == "abc_123"


@pytest.mark.parametrize("value", HOSTILE)
def test_escape_backslashes_every_special_character(value: str) -> None:
    escaped = query.escape(value)
    unescaped = [
        ch
        for i, ch in enumerate(escaped)
        if not ch.isalnum() and ch != "_" and (i == 0 or escaped[i - 1] != "\\") and ch != "\\"
    ]
    assert unescaped == []


@pytest.mark.parametrize("value", ["", "a\nb", "a\x00"])
def test_escape_refuses_empty_and_control_values(value: str) -> None:
    with pytest.raises(InvalidInput):
        query.escape(value)


def test_tag_numeric_and_knn_shapes() -> None:
    assert query.tag("project", ["my-proj.v2"]) == "@project:{my\\-proj\\.v2}"
    assert query.numeric("created_at", 1.0, None) == "@created_at:[1.0 +inf]"
    assert query.numeric("created_at", None, 2.0, exclusive_high=True) == "@created_at:[-inf (2.0]"
    search = Search(
        index="i",
        clauses=(query.tag("state", ["active"]),),
        knn=5,
        vector=b"\0" * 4,
        return_fields=("created_at",),
        limit=3,
        offset=1,
    )
    args = search.args()
    assert args[2] == "(@state:{active})=>[KNN 5 @vector $vec EF_RUNTIME $ef AS distance]"
    # valkey-search rejects SORTBY on the alias: the store orders KNN rows
    assert "SORTBY" not in args
    assert args[args.index("RETURN") : args.index("RETURN") + 4] == [
        "RETURN",
        "2",
        "created_at",
        "distance",
    ]
    # all k rows; offset/limit applied after ordering
    assert args[-5:] == ["LIMIT", "0", "5", "DIALECT", "2"]


def test_match_all_text_alternatives_and_sorting_shapes() -> None:
    assert Search(index="i").args()[2] == "-@created_at:[-inf -inf]"  # never a bare * without KNN
    assert Search(index="i", knn=2, vector=b"\0" * 4).query_text().startswith("(*)=>[KNN 2 ")
    assert query.text_any("content", ["redis"]) == "@content:redis"
    assert query.text_any("content", ["redis", "v1.2"]) == "(@content:redis | @content:v1\\.2)"
    args = Search(index="i", sort_by="created_at", descending=True, limit=4, offset=8).args()
    assert args[args.index("SORTBY") : args.index("SORTBY") + 3] == ["SORTBY", "created_at", "DESC"]
    assert args[-5:] == ["LIMIT", "8", "4", "DIALECT", "2"]
    with pytest.raises(InvalidInput, match="ordered by distance"):
        Search(index="i", knn=2, vector=b"\0" * 4, sort_by="created_at").args()


def test_knn_rows_are_paged_after_ordering_by_distance() -> None:
    rows = [("c", 0.3), ("a", 0.1), ("d", None), ("b", 0.2)]
    knn = Search(index="i", knn=4, vector=b"\0" * 4, offset=1, limit=2)
    assert knn.page(rows, lambda row: row[1]) == [("b", 0.2), ("c", 0.3)]
    # a filter keeps the engine's order
    assert Search(index="i").page(rows, lambda row: row[1]) == rows


def test_knn_without_vector_is_refused() -> None:
    with pytest.raises(InvalidInput):
        Search(index="i", knn=3).args()


def test_namespaces_add_one_tag_clause_unless_every_namespace_is_asked_for() -> None:
    assert (
        Search(index="i", namespaces=("skill", "episodic")).filter_text()
        == "@namespace:{episodic|skill}"
    )
    assert Search(
        index="i", namespaces=("knowledge",), clauses=("@state:{active}",)
    ).filter_text() == ("@namespace:{knowledge} @state:{active}")
    assert Search(index="i", namespaces=NAMESPACES).filter_text() == query.MATCH_ALL
    assert (
        Search(index="i", knn=3, vector=b"v", namespaces=()).query_text().startswith("(*)=>[KNN 3")
    )
    with pytest.raises(InvalidInput, match="unknown namespace 'everything'"):
        Search(index="i", namespaces=("everything",)).filter_text()


def test_a_namespace_clause_finds_only_that_namespace(engine: Engine) -> None:
    keys = {
        ns: engine.memories.remember(
            Draft(f"a note about caching in {ns}", namespace=ns), actor="t"
        ).key
        for ns in ("episodic", "knowledge")
    }
    every = Search(index=engine.ctx.index, return_fields=("created_at",), limit=10)
    # control
    assert {h.memory.key for h in engine.store.memories.search(every).hits} == set(keys.values())
    for ns, key in keys.items():
        only = Search(
            index=engine.ctx.index, namespaces=(ns,), return_fields=("created_at",), limit=10
        )
        assert [h.memory.key for h in engine.store.memories.search(only).hits] == [key]


def test_bad_field_name_is_refused() -> None:
    with pytest.raises(InvalidInput):
        query.tag("project} @x:{", ["a"])


def _project_hits(engine: Engine, values: list[str]) -> set[str]:
    search = Search(
        index=engine.ctx.index,
        namespaces=("knowledge",),
        clauses=(query.tag("project", values),),
        return_fields=("project", "created_at"),
        limit=100,
    )
    return {h.memory.project for h in engine.store.memories.search(search).hits}


def _seed(engine: Engine) -> None:
    for project in ("alpha", "beta", "my-proj.v2"):
        engine.memories.remember(
            Draft(f"memory of {project} about caching", project=project), actor="t"
        )


def test_hyphen_and_dot_values_filter_exactly(engine: Engine) -> None:
    _seed(engine)
    assert _project_hits(engine, ["my-proj.v2"]) == {"my-proj.v2"}
    assert _project_hits(engine, ["alpha", "beta"]) == {"alpha", "beta"}


WIDENING = [
    "alpha}|@project:{beta",
    "alpha|beta",
    "*",
    "alpha} | {beta",
    "(alpha|beta)",
    "alpha\\}|{beta",
    "beta*",
    '"beta"',
    "bet?",
    "ünï} -@project:{x",
    "%beta%",
    "be ta",
    "-beta",
    ".beta",
]


@pytest.mark.parametrize("hostile", WIDENING)
def test_hostile_tag_values_are_refused_before_a_query_is_built(hostile: str) -> None:
    # escaping alone is not enough: an escaped \* is still a wildcard on valkey-search 1.2.1
    # positive control: a plain value passes
    assert query.tag("project", ["beta"]) == "@project:{beta}"
    with pytest.raises(InvalidInput, match="tag filter value"):
        query.tag("project", [hostile])


def test_legal_punctuated_values_still_filter_exactly(engine: Engine) -> None:
    _seed(engine)
    assert _project_hits(engine, ["beta"]) == {"beta"}
    assert _project_hits(engine, ["my-proj.v2", "alpha"]) == {"my-proj.v2", "alpha"}


def test_hostile_project_names_are_refused_at_the_front(engine: Engine) -> None:
    for hostile in HOSTILE:
        with pytest.raises(InvalidInput, match="project name"):
            engine.memories.remember(Draft("x", project=hostile), actor="t")


def test_hostile_tags_are_refused(engine: Engine) -> None:
    for hostile in ["a}", "a|b", "a b", "ünï", "*", ""]:
        with pytest.raises(InvalidInput, match="tag"):
            engine.memories.remember(Draft("x", tags=[hostile]), actor="t")


def test_tag_filter_with_punctuation_round_trips(engine: Engine) -> None:
    stored = engine.memories.remember(
        Draft("CI runs on push", tags=["ci/cd", "c++", "v1.2"]), actor="t"
    )
    search = Search(
        index=engine.ctx.index,
        namespaces=("knowledge",),
        clauses=(query.tag("tags", ["ci/cd"]),),
        return_fields=("created_at",),
        limit=10,
    )
    keys = [h.memory.key for h in engine.store.memories.search(search).hits]
    assert keys == [stored.key]
    memory: Memory = engine.memories.get(stored.key)
    assert memory.tags == ("ci/cd", "c++", "v1.2")
