"""Exact KNN over a small filtered set (kenning/store/prefilter.py), against the engine's own KNN
on the same store: the same memories in the same order at the same distances, on
whichever engine the suite runs."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from kenning.core import query, schema
from kenning.core.query import Search
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.store import MemoryStore, Near, SearchResult, prefilter

TOPICS = [
    "the deploy pipeline",
    "database migrations",
    "the test suite",
    "log rotation",
    "TLS certificates",
    "the cache layer",
    "feature flags",
    "the message queue",
    "backups",
    "rate limits",
    "the search index",
    "error budgets",
]


def _seed(engine: Engine) -> None:
    for project, count in (("alpha", 12), ("beta", 12), ("gamma", 3)):
        for n, topic in enumerate(TOPICS[:count]):
            engine.memories.remember(
                Draft(
                    f"In {project}, {topic} is owned by team {n} and reviewed weekly.",
                    project=project,
                ),
                actor="t",
            )


def _search(engine: Engine, text: str, project: str, k: int) -> Search:
    vector = schema.vector_bytes(engine.ctx.embedder.embed(text))
    return Search(
        index=engine.ctx.index,
        namespaces=("knowledge",),
        knn=k,
        vector=vector,
        ef_runtime=64,
        limit=k,
        clauses=(query.tag("state", ["active"]), query.tag("project", [project])),
        return_fields=("content", "created_at", "distance"),
    )


def test_exact_finds_what_the_engine_knn_finds_in_the_same_order(engine: Engine) -> None:
    _seed(engine)
    search = _search(engine, "who looks after database migrations?", "alpha", 5)
    unfiltered = engine.store.memories.search(
        Search(
            index=search.index,
            knn=30,
            vector=search.vector,
            ef_runtime=64,
            limit=30,
            return_fields=("project", "created_at", "distance"),
        )
    )
    # the control: beta is there to leak
    assert {h.memory.project for h in unfiltered.hits} >= {"alpha", "beta"}
    expected = engine.store.memories.search(search).hits
    found = prefilter.exact(engine.store.client, [search], [("content", "created_at")])[0]
    assert found is not None
    assert [key for key, _, _ in found] == [h.memory.key for h in expected]
    assert len(found) == 5
    for (_, distance, fields), hit in zip(found, expected, strict=True):
        assert distance == pytest.approx(hit.distance, abs=1e-4)
        assert fields["content"] == hit.memory.content
        assert fields["content"].startswith("In alpha,")


def test_the_small_set_keeps_to_the_namespaces_asked_for(engine: Engine) -> None:
    _seed(engine)  # knowledge memories; an episodic one of the same project and topic beside them
    episodic = engine.memories.remember(
        Draft(
            "In gamma, backups are owned by team 9 and reviewed weekly.",
            namespace="episodic",
            project="gamma",
        ),
        actor="t",
    ).key
    every = replace(
        _search(engine, "who owns backups?", "gamma", 5), namespaces=("episodic", "knowledge")
    )
    both = prefilter.exact(engine.store.client, [every], [("content",)])[0]
    assert both is not None
    # the control: the episodic memory is in the small set
    assert episodic in [key for key, _, _ in both]
    assert [key for key, _, _ in both] == [
        h.memory.key for h in engine.store.memories.search(every).hits
    ]
    only = prefilter.exact(
        engine.store.client, [replace(every, namespaces=("knowledge",))], [("content",)]
    )[0]
    assert only is not None
    assert episodic not in [key for key, _, _ in only]
    assert len(only) == 3  # gamma's 3 knowledge memories and no other namespace's


def test_a_set_larger_than_the_cap_is_left_to_the_engine(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    _seed(engine)
    monkeypatch.setattr(prefilter, "MAX_SET", 5)
    large, small = _search(engine, "backups", "alpha", 3), _search(engine, "backups", "gamma", 3)
    found = prefilter.exact(engine.store.client, [large, small], [(), ()])
    assert found[0] is None  # 12 alpha memories: over the cap, the engine's KNN runs it
    assert found[1] is not None
    assert len(found[1]) == 3  # gamma's 3, all under the cap


def test_only_filtered_knns_are_answered_here(engine: Engine) -> None:
    _seed(engine)
    search = _search(engine, "backups", "gamma", 3)
    bare = Search(index=search.index, knn=3, vector=search.vector, ef_runtime=64, limit=3)
    assert prefilter.candidates(search)
    assert not prefilter.candidates(bare)
    assert prefilter.exact(engine.store.client, [bare], [()]) == [None]


def test_the_store_returns_the_same_hits_with_and_without_exact_small_sets(engine: Engine) -> None:
    _seed(engine)
    client, prefix = engine.store.client, engine.store.prefix
    wanted = [
        Near(_search(engine, "who reviews the deploy pipeline?", project, 10), max_distance=0.8)
        for project in ("alpha", "gamma")
    ]
    by_engine = MemoryStore(client, prefix, exact_small_sets=False).nearest(wanted)
    by_store = MemoryStore(client, prefix, exact_small_sets=True).nearest(wanted)
    assert [len(r.hits) for r in by_engine] == [10, 3]  # the control: both searches find rows
    for ours, theirs in zip(by_store, by_engine, strict=True):
        assert [h.memory.key for h in ours.hits] == [h.memory.key for h in theirs.hits]
        assert [h.memory for h in ours.hits] == [h.memory for h in theirs.hits]
        assert [h.distance for h in ours.hits] == pytest.approx(
            [h.distance for h in theirs.hits], abs=1e-4
        )


def _filter_reply(engine: Engine, clauses: tuple[str, ...], limit: int) -> Any:
    """The raw NOCONTENT reply of a filter on the memory index: [count, key, ...]."""
    search = Search(index=engine.ctx.index, clauses=clauses, limit=limit)
    return engine.store.client.execute_command(*search.args())  # type: ignore[no-untyped-call]


def _text_search(engine: Engine, project: str, words: tuple[str, ...]) -> Search:
    base = _search(engine, "who owns it?", project, 10)
    return Search(
        index=base.index,
        knn=10,
        vector=base.vector,
        ef_runtime=64,
        limit=10,
        clauses=(*base.clauses, *(query.text_any("content", [w]) for w in words)),
        return_fields=base.return_fields,
    )


@pytest.mark.parametrize("max_text", [prefilter.MAX_TEXT, 3])
def test_a_text_clause_is_intersected_apart_with_the_same_rows(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, max_text: int
) -> None:
    """The TEXT clauses and the others are asked apart and their keys intersected (with a TEXT
    side over its limit, the term is checked on the content: ``Worded``): the
    rows of the whole filter."""
    _seed(engine)
    monkeypatch.setattr(prefilter, "MAX_TEXT", max_text)
    search = _text_search(engine, "alpha", ("backups",))
    assert prefilter.split(search) == (search.clauses[2:], search.clauses[:2])
    # all 12 of beta, and alpha's and gamma's share the word
    wide = _text_search(engine, "beta", ("weekly",))
    client = engine.store.client
    whole = [_filter_reply(engine, s.clauses, 400) for s in (search, wide)]
    # the control: what the whole filters match
    assert [int(reply[0]) for reply in whole] == [1, 12]
    for one, reply in zip((search, wide), whole, strict=True):
        matching = {k.decode() for k in reply[1:]}
        found = prefilter.exact(client, [one], [("content",)])[0]
        assert found is not None
        assert {key for key, _, _ in found} <= matching
        assert len(found) == min(10, len(matching))
        assert all("alpha" not in fields["content"] for _, _, fields in found) or one is search


def test_a_text_side_over_its_limit_is_checked_on_the_content_not_asked_whole(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the TEXT side over MAX_TEXT: the other side's keys are answered ``Worded`` (the term
    checked on each member's content), never the whole filter in a second round trip; the rows
    the engine's KNN returns."""
    _seed(engine)
    engine.memories.remember(
        Draft("In beta, the pager rotation is owned by team 7.", project="beta"), actor="t"
    )
    monkeypatch.setattr(prefilter, "MAX_TEXT", 3)
    asked_whole: list[int] = []
    whole = prefilter.queue_keys

    def spy(pipe: object, searches: list[Search], *, together: bool = False) -> None:
        asked_whole.extend([len(searches)] if together else [])
        whole(pipe, searches, together=together)

    monkeypatch.setattr(prefilter, "queue_keys", spy)
    search = _text_search(engine, "beta", ("weekly",))
    client = engine.store.client
    filtered = {k.decode() for k in _filter_reply(engine, search.clauses[:2], 400)[1:]}
    worded = {k.decode() for k in _filter_reply(engine, search.clauses, 400)[1:]}
    assert len(filtered) == 13  # the control: the pager memory is in beta's filter set ...
    # ... but lacks the word, and beta's 12 others hold it (over MAX_TEXT 3)
    assert len(worded) == 12
    # the exact answer over the whole filter's matches (valkey-search's own hybrid KNN with a TEXT
    # term is not exact: docs/valkey-search.md)
    query_vector = np.frombuffer(search.vector or b"", dtype=np.float32)
    keys = sorted(worded)
    cosine = [
        float(np.dot(v, query_vector) / np.linalg.norm(v) / np.linalg.norm(query_vector))
        for v in engine.store.vectors(keys)
        if v is not None
    ]
    expected = [key for _, key in sorted(zip([1.0 - c for c in cosine], keys, strict=True))][:10]
    found = prefilter.exact(client, [search], [("created_at",)])[0]
    assert found is not None
    assert asked_whole == []
    assert [key for key, _, _ in found] == expected
    assert len(found) == 10
    assert {key for key, _, _ in found} <= worded
    # the content read for the check only
    assert all(set(fields) == {"created_at"} for _, _, fields in found)
    sides = ((search.clauses[:2], 400), (search.clauses[2:], 3))
    replies = [_filter_reply(engine, c, n) for c, n in sides]
    sets = prefilter.small_sets([search], replies)
    assert isinstance(sets[0], prefilter.Worded)
    assert sets[0].clauses == (("weekly",),)


def test_text_terms_reads_back_what_text_any_wrote() -> None:
    for terms in (["weekly"], ["ERR_SSL"], ["node.js", "a|b c"], ["Größe"]):
        assert query.text_terms(query.text_any("content", terms)) == tuple(
            t.casefold() for t in terms
        )


def test_a_worded_set_holds_content_with_a_term_of_every_clause() -> None:
    worded = prefilter.Worded(["k"], (("weekly", "daily"), ("err_ssl",)))
    assert worded.holds("Reviewed DAILY; the error was ERR_SSL.")
    # a longer word is not the term
    assert not worded.holds("Reviewed daily; the error was ERR_SSLV3.")
    assert not worded.holds("the error was ERR_SSL, reviewed monthly")


def _batched(store: MemoryStore, wanted: list[Near]) -> list[SearchResult]:
    batch = store.batch(wanted)
    pipe = store.client.pipeline(transaction=False)
    batch.queue(pipe)
    return batch.finish(pipe.execute())  # type: ignore[no-untyped-call]


def test_a_batch_returns_what_search_and_nearest_return_with_and_without_exact_small_sets(
    engine: Engine,
) -> None:
    _seed(engine)
    client, prefix = engine.store.client, engine.store.prefix
    plain = _search(engine, "who owns backups?", "beta", 1)
    near = Near(
        replace(_search(engine, "who reviews the deploy pipeline?", "alpha", 10), return_fields=()),
        max_distance=0.8,
    )
    expected = [
        engine.store.memories.search(plain),
        *MemoryStore(client, prefix, exact_small_sets=False).nearest([near]),
    ]
    assert [len(r.hits) for r in expected] == [1, 10]  # the control: both searches find rows
    for exact in (False, True):
        found = _batched(MemoryStore(client, prefix, exact_small_sets=exact), [Near(plain), near])
        for ours, theirs in zip(found, expected, strict=True):
            assert [h.memory for h in ours.hits] == [h.memory for h in theirs.hits]
            assert [h.distance for h in ours.hits] == pytest.approx(
                [h.distance for h in theirs.hits], abs=1e-4
            )


def test_a_batch_keeps_only_the_rows_within_the_distance(engine: Engine) -> None:
    _seed(engine)
    client, prefix = engine.store.client, engine.store.prefix
    search = replace(
        _search(engine, "who reviews the deploy pipeline?", "alpha", 10), return_fields=()
    )
    every = _batched(MemoryStore(client, prefix, exact_small_sets=False), [Near(search)])[0].hits
    assert len(every) == 10  # the control: ten rows at different distances
    distances = [float(h.distance or 0.0) for h in every]
    # the cut sits in the widest gap
    split = max(range(1, 9), key=lambda i: distances[i] - distances[i - 1])
    assert distances[split] - distances[split - 1] > 1e-3
    cut = (distances[split - 1] + distances[split]) / 2
    for exact in (False, True):
        (kept,) = _batched(
            MemoryStore(client, prefix, exact_small_sets=exact), [Near(search, max_distance=cut)]
        )
        assert [h.memory.key for h in kept.hits] == [h.memory.key for h in every[:split]]
