"""Every query shape kenning/core/query.py builds, run against BOTH search engines (valkey-search
1.2.1 and RediSearch 2.10), with the same expected answer on each; then the engine quirks that
decided each form, pinned on the engine that has them (docs/valkey-search.md)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
import valkey

from kenning.core import query, schema
from kenning.core.clock import ManualClock
from kenning.core.errors import InvalidInput, StoreError
from kenning.core.query import Search
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder
from kenning.store import AuditEvent, Near, connect, search_module
from kenning.store import indexes as index_admin
from kenning.store.client import call, index_missing
from tests.conftest import NOW, _wipe, make_settings

# a direct store write records itself too
SETUP = [AuditEvent(actor="test", action="test_setup", key="")]

ENGINES = [search_module.VALKEY_SEARCH, search_module.REDISEARCH]
SEED = [  # content, project, tags
    ("Redis streams keep the audit log", "alpha", ["redis", "ci/cd"]),
    ("Use pytest fixtures for the Valkey server", "beta", ["python"]),
    ("HNSW parameters M=16 and EF_CONSTRUCTION=200", "my-proj.v2", ["v1.2"]),
    ("Ruff replaces flake8 and isort", "beta-x", ["python", "c++"]),
    ("Docker is not available on this machine", "alpha", ["docker"]),  # archived below
]


@pytest.fixture(params=ENGINES)
def on(
    request: pytest.FixtureRequest,
    engines: Mapping[str, EmbeddedValkey],
    embedder: Embedder,
    prefix: str,
) -> Iterator[Engine]:
    """An engine over the named search module, its own prefix, seeded with SEED (oldest first)."""
    server = engines[request.param]
    settings = make_settings(
        server.settings.data_dir, server.settings.valkey_port, key_prefix=prefix
    )
    client = connect(settings)
    clock = ManualClock(NOW)
    engine = Engine.open(settings, client, embedder, clock=clock)
    for content, project, tags in SEED:
        engine.memories.remember(Draft(content, project=project, tags=tags), actor="t")
        clock.advance(60)
    yield engine
    _wipe(client, prefix)
    client.close()  # type: ignore[no-untyped-call]


def _keys(engine: Engine) -> list[str]:
    """The seeded keys, oldest first; the last one archived."""
    search = Search(
        index=_index(engine), sort_by="created_at", return_fields=("created_at",), limit=50
    )
    keys = [h.memory.key for h in engine.store.memories.search(search).hits]
    assert len(keys) == len(SEED)
    assert engine.store.memories.update(keys[-1], {"state": "archived"}, SETUP)
    return keys


def _index(engine: Engine) -> str:
    return engine.ctx.index  # the seed is all knowledge


def _found(engine: Engine, *clauses: str, **options: Any) -> list[str]:
    search = replace(
        Search(index=_index(engine), clauses=clauses, return_fields=("created_at",), limit=50),
        **options,
    )
    return [h.memory.key for h in engine.store.memories.search(search).hits]


def test_the_engine_is_the_one_named(on: Engine, engines: Mapping[str, EmbeddedValkey]) -> None:
    found = search_module.detect(on.store.client)
    assert found is not None
    assert engines[found.name].settings.valkey_port == on.ctx.settings.valkey_port
    assert found.version.count(".") == 2


def test_listing_shapes_give_the_same_answer(on: Engine) -> None:
    k = _keys(on)
    assert _found(on, sort_by="created_at", descending=True) == k[::-1]  # the match-all, sorted
    assert _found(on, sort_by="created_at", descending=True, offset=1, limit=2) == [k[3], k[2]]
    assert on.store.memories.count(Search(index=_index(on))) == 5
    assert set(_found(on, query.not_tag("state", ["archived"]))) == set(k[:4])  # negation alone
    assert (
        on.store.memories.count(
            Search(index=_index(on), clauses=(query.not_tag("state", ["archived"]),))
        )
        == 4
    )
    assert set(
        _found(on, query.tag("project", ["alpha"]), query.not_tag("state", ["archived"]))
    ) == {k[0]}
    assert set(_found(on, query.numeric("created_at", NOW + 60, None, exclusive_low=True))) == set(
        k[2:]
    )
    assert set(_found(on, query.numeric("created_at", None, NOW + 60))) == set(k[:2])


def test_tag_values_with_punctuation_filter_exactly(on: Engine) -> None:
    k = _keys(on)
    assert set(_found(on, query.tag("project", ["beta"]))) == {k[1]}  # not beta-x: no prefix match
    assert set(_found(on, query.tag("project", ["my-proj.v2", "beta-x"]))) == {k[2], k[3]}
    assert set(_found(on, query.tag("tags", ["ci/cd"]))) == {k[0]}
    assert set(_found(on, query.tag("tags", ["c++"]))) == {k[3]}
    assert set(_found(on, query.tag("tags", ["v1.2"]))) == {k[2]}
    with pytest.raises(InvalidInput):  # refused before a query exists, on either engine
        query.tag("project", ["beta*"])


def test_text_terms_single_and_alternatives(on: Engine) -> None:
    k = _keys(on)
    assert set(_found(on, query.text_any("content", ["pytest"]))) == {k[1]}
    assert set(_found(on, query.text_any("content", ["pytest", "ruff"]))) == {k[1], k[3]}
    both = (query.text_any("content", ["pytest", "ruff"]), query.tag("project", ["beta"]))
    assert set(_found(on, *both)) == {k[1]}


def test_numeric_alternatives_filter_and_prefilter_a_knn(on: Engine) -> None:
    """A recall's date window: ``event_date`` or ``created_at`` in a range (recall.window)."""
    k = _keys(on)
    assert on.store.memories.update(k[0], {"event_date": NOW - 86_400.0}, SETUP)
    window = query.any_of(
        query.numeric("event_date", NOW - 2 * 86_400.0, NOW, exclusive_high=True),
        query.numeric("created_at", NOW + 60, NOW + 120, exclusive_high=True),
    )
    assert set(_found(on, window)) == {k[0], k[1]}  # one by each field
    assert set(_found(on, query.numeric("created_at", NOW + 60, NOW + 120))) == {k[1], k[2]}
    vector = schema.vector_bytes(on.ctx.embedder.embed("python testing tools"))
    knn = Search(
        index=_index(on),
        knn=5,
        vector=vector,
        return_fields=("created_at",),
        limit=5,
        clauses=(query.not_tag("state", ["archived"]), window),
    )
    assert {h.memory.key for h in on.store.memories.search(knn).hits} == {k[0], k[1]}


def _exact_order(on: Engine, text: str, keys: list[str]) -> list[tuple[str, float]]:
    """Cosine distances computed in Python from the stored vectors, nearest first."""
    q = on.ctx.embedder.embed(text)
    out = []
    for key in keys:
        v = on.store.memories.read_vector(key)
        assert v is not None
        out.append((key, 1.0 - float(np.dot(q, v) / (np.linalg.norm(q) * np.linalg.norm(v)))))
    return sorted(out, key=lambda pair: pair[1])


def test_knn_shapes_come_back_nearest_first(on: Engine) -> None:
    k = _keys(on)
    vector = schema.vector_bytes(on.ctx.embedder.embed("python testing tools"))
    knn = Search(index=_index(on), knn=5, vector=vector, return_fields=("created_at",), limit=5)
    hits = on.store.memories.search(knn).hits
    exact = _exact_order(on, "python testing tools", k)
    assert [h.distance for h in hits] == pytest.approx([d for _, d in exact], abs=1e-4)
    assert [h.distance for h in hits] == sorted(h.distance for h in hits if h.distance is not None)
    paged = on.store.memories.search(
        Search(
            index=_index(on), knn=5, vector=vector, return_fields=("created_at",), offset=1, limit=2
        )
    ).hits
    assert [h.memory.key for h in paged] == [h.memory.key for h in hits[1:3]]
    filtered = Search(
        index=_index(on),
        knn=5,
        vector=vector,
        return_fields=("created_at",),
        limit=5,
        clauses=(
            query.not_tag("state", ["archived"]),
            query.text_any("content", ["pytest", "ruff"]),
        ),
    )
    assert {h.memory.key for h in on.store.memories.search(filtered).hits} == {k[1], k[3]}
    assert on.store.memories.count(knn) == 5
    cut = (exact[1][1] + exact[2][1]) / 2
    (near,) = on.store.memories.nearest([Near(knn, max_distance=cut)])
    assert [h.memory.key for h in near.hits] == [key for key, _ in exact[:2]]


def test_index_info_and_errors_are_read_the_same_way(on: Engine) -> None:
    k = _keys(on)
    client = on.store.client
    info = index_admin.info(client, _index(on))
    assert info is not None  # positive control for the missing index below
    assert (info.num_docs, info.indexing, info.percent_indexed) == (5, False, 1.0)
    assert {"content", "project", "created_at", "vector"} <= set(info.attributes)
    assert index_admin.info(client, _index(on) + "-gone") is None
    call(client.hdel, k[0], "created_at")  # the match-all still sees a row that lost its created_at
    assert on.store.memories.count(Search(index=_index(on))) == 5
    assert (
        on.store.memories.count(Search(index=_index(on), clauses=(query.numeric("created_at"),)))
        == 4
    )
    # exists: accepted
    index_admin.ensure(client, on.ctx.settings.key_prefix, on.ctx.embedder.dimension)
    with pytest.raises(StoreError) as gone:
        on.store.memories.search(Search(index=_index(on) + "-gone"))
    assert index_missing(gone.value)
    with pytest.raises(StoreError, match=r"Valkey answered with an error: .+") as bad:
        on.store.memories.search(Search(index=_index(on), clauses=("@created_at:[1 2",)))
    assert not index_missing(bad.value)


# --- the quirks that decided the forms above, pinned on each engine -------------------------------


def _raw(client: valkey.Valkey, index: str, *query_args: str | bytes) -> list[bytes]:
    reply: list[bytes] = call(
        client.execute_command,
        "FT.SEARCH",
        index,
        *query_args,
        "NOCONTENT",
        "LIMIT",
        "0",
        "50",
        "DIALECT",
        "2",
    )
    return reply


def test_the_forms_kenning_avoids_are_refused_or_widened_on_valkey_search(on: Engine) -> None:
    k = _keys(on)
    client, index = on.store.client, _index(on)
    found = search_module.detect(client)
    assert found is not None
    valkey_search = found.name == search_module.VALKEY_SEARCH
    assert len(_raw(client, index, r"@project:{beta}")) == 2  # positive control: one hit
    widened = _raw(client, index, r"@project:{beta\*}")
    assert set(widened[1:]) == ({k[1].encode(), k[3].encode()} if valkey_search else set())
    vector = schema.vector_bytes(on.ctx.embedder.embed("python"))
    refused = {
        "bare *": ("*",),
        "parenthesised TEXT": ("@content:(pytest|ruff)",),
        "SORTBY the distance": (
            "(*)=>[KNN 2 @vector $vec AS distance]",
            "PARAMS",
            "2",
            "vec",
            vector,
            "SORTBY",
            "distance",
            "ASC",
        ),
    }
    for name, args in refused.items():
        if valkey_search:
            with pytest.raises(StoreError):
                _raw(client, index, *args)
        else:
            assert int(_raw(client, index, *args)[0]) > 0, name
