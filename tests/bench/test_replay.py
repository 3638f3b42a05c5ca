"""bench.replay: the variants of a captured search, and capturing and replaying an engine's recall
searches on both engines."""

from __future__ import annotations

from bench.replay import (
    TAGS_ONLY,
    Command,
    bare_knn,
    captured,
    filter_only,
    is_knn,
    no_negations,
    policy,
    project_only,
    replay,
    tags_only_index,
    variants,
)
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.store.client import text
from kenning.store.search_module import REDISEARCH, VALKEY_SEARCH

KNN: Command = (
    "FT.SEARCH",
    "idx",
    "(@state:{active} @project:{a\\-b|global} -@trust:{superseded})"
    "=>[KNN 40 @vector $vec EF_RUNTIME $ef AS distance]",
    "PARAMS",
    "4",
    "vec",
    b"\x00" * 8,
    "ef",
    "64",
    "RETURN",
    "1",
    "distance",
    "LIMIT",
    "0",
    "40",
    "DIALECT",
    "2",
)
FILTER: Command = (
    "FT.SEARCH",
    b"idx",
    b"@state:{active} @project:{a} -@trust:{superseded}",
    b"NOCONTENT",
    b"LIMIT",
    b"0",
    b"400",
    b"DIALECT",
    b"2",
)


def test_a_knn_keeps_its_clause_when_its_filter_changes() -> None:
    assert is_knn(KNN)
    assert not is_knn(FILTER)
    assert no_negations(KNN)[2] == (
        "(@state:{active} @project:{a\\-b|global})"
        "=>[KNN 40 @vector $vec EF_RUNTIME $ef AS distance]"
    )
    assert project_only(KNN)[2] == (
        "(@project:{a\\-b|global})=>[KNN 40 @vector $vec EF_RUNTIME $ef AS distance]"
    )
    assert bare_knn(KNN)[2] == "(*)=>[KNN 40 @vector $vec EF_RUNTIME $ef AS distance]"
    assert no_negations(KNN)[3:] == KNN[3:]  # parameters, RETURN and LIMIT as sent


def test_a_filter_variant_of_a_filter_and_of_a_knn() -> None:
    assert filter_only(KNN) == (
        "FT.SEARCH",
        "idx",
        "@state:{active} @project:{a\\-b|global} -@trust:{superseded}",
        "NOCONTENT",
        "LIMIT",
        "0",
        "400",
        "DIALECT",
        "2",
    )
    assert text(filter_only(FILTER)[2]) == text(FILTER[2])
    assert no_negations(FILTER)[2] == "@state:{active} @project:{a}"
    assert bare_knn(FILTER) == FILTER  # no KNN to strip


def test_a_forced_policy_is_a_redisearch_variant_only() -> None:
    assert policy("ADHOC_BF")(KNN)[2] == (
        "(@state:{active} @project:{a\\-b|global} -@trust:{superseded})"
        "=>[KNN 40 @vector $vec HYBRID_POLICY ADHOC_BF AS distance]"
    )
    assert policy("BATCHES")(KNN)[2] == (
        "(@state:{active} @project:{a\\-b|global} -@trust:{superseded})"
        "=>[KNN 40 @vector $vec EF_RUNTIME $ef HYBRID_POLICY BATCHES AS distance]"
    )
    common = ["as sent", "filter only", "no negations", "project only", "bare KNN"]
    assert list(variants(REDISEARCH, None)) == [*common, "ADHOC_BF", "BATCHES"]
    assert list(variants(VALKEY_SEARCH, "tags")) == [*common, TAGS_ONLY]


def test_a_recalls_searches_are_captured_and_replayed(engine: Engine) -> None:
    for n in range(6):
        engine.memories.remember(
            Draft(f"the deploy of service s{n} copies files with rsync -{n}", project="replay-a"),
            actor="pytest",
        )
    searches: list[Command] = []
    with captured(searches):
        hits = engine.recaller.recall(
            RecallRequest("how are files copied on deploy", projects=["replay-a"], actor="pytest")
        ).hits
    assert hits  # the recall found the memories the replay's searches must find again
    knn = [s for s in searches if is_knn(s)]
    module = engine.ctx.store.search_module()
    assert module is not None
    client = engine.ctx.store.client
    tags = tags_only_index(client, engine)
    try:
        named = variants(module.name, tags)
        if module.name == VALKEY_SEARCH:  # its small-set path: a filter search, exact scoring
            assert not knn
            assert searches
            replayed, same = searches, TAGS_ONLY
        else:
            assert knn
            replayed, same = knn, "ADHOC_BF"
        taken = replay(client, replayed, named, rounds=2, seed=1)
    finally:
        client.execute_command("FT.DROPINDEX", tags)  # type: ignore[no-untyped-call]
    assert {len(t["seconds"]) for t in taken.values()} == {2 * len(replayed)}
    assert taken[same]["rows"] == taken["as sent"]["rows"]
    assert min(taken["as sent"]["rows"]) == 6  # the project's memories, found again
    assert min(taken["filter only"]["rows"]) == 6
