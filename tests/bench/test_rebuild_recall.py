"""The rebuild recall bench end to end at a small size: a private Valkey, the three ways of
building the index, every measure; and the self-recall check sees a miss when there is one."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bench import rebuild_recall
from bench.corpus import generate
from bench.run import private_store
from kenning.engine import Engine
from kenning.runtime.embedding import Embedder
from tests.conftest import make_settings

N = 300


def test_each_way_of_building_the_index_is_measured(
    embedder: Embedder, embedding_backend: str, tmp_path: Path
) -> None:
    items = generate("1k", 7).items[:N]
    matrix = np.asarray(embedder.embed_many([i.content for i in items]), dtype=np.float32)
    queries = rebuild_recall.query_vectors(embedder, items, 7, 4)
    settings = make_settings(tmp_path / "data", 6399, embedding_backend=embedding_backend)
    lines: list[str] = []
    out = rebuild_recall.curves(settings, embedder, items, matrix, queries, range(N), lines.append)
    assert list(out["phases"]) == ["bulk load", "restore", "reindex"]
    for measured in out["phases"].values():
        assert measured["num_docs"] == N
        *curve, again = measured["curve"]
        # the first EF_RUNTIME measured once more at the end (an index still filling shows there)
        assert (again["ef_runtime"], again["again"]) == (rebuild_recall.EF_CURVE[0], True)
        assert 0 <= again["self_missed"] <= N
        assert measured["index_state"]
        assert [c["ef_runtime"] for c in curve] == list(rebuild_recall.EF_CURVE)
        assert all(c["self_checked"] == N for c in curve)
        # EF_RUNTIME 256 over 300 rows visits nearly every one: every memory is found
        assert curve[-1]["self_missed"] == 0
        assert curve[-1]["recall@10_within_0.01"] >= 0.9
        assert all(0.0 <= c["recall@10"] <= c["recall@10_within_0.01"] <= 1.0 for c in curve)
        # then the product's self-check over every memory, and the sample measured again
        fixed = measured["repaired"]
        assert (fixed["check"]["checked"], fixed["check"]["still_missed"]) == (N, 0)
        assert fixed["check"]["spread"] == 0  # every vector was written spread: no copy to spread
        assert (fixed["self_checked"], fixed["self_missed"]) == (N, 0)
        assert fixed["check_seconds_per_10k"] > 0
    assert "reindex" in "".join(lines)
    assert "repair: self-check: 300 of 300 reachable" in "".join(lines)
    table = rebuild_recall.table({"size": N, **out})
    assert table.count("\n") == 2 + 3 * (len(rebuild_recall.EF_CURVE) + 1) - 1


def test_a_memory_its_own_vector_does_not_find_is_a_miss(
    embedder: Embedder, embedding_backend: str, tmp_path: Path
) -> None:
    items = generate("1k", 7).items[:40]
    matrix = np.asarray(embedder.embed_many([i.content for i in items]), dtype=np.float32)
    settings = make_settings(tmp_path / "data", 6399, embedding_backend=embedding_backend)
    with private_store(settings) as (private, client):
        engine = Engine.open(private, client, embedder)
        keys = rebuild_recall.bulk_load(engine, items, matrix)
        index = engine.ctx.index
        assert rebuild_recall.self_misses(client, index, keys, matrix, range(40), 64) == []
        # the positive control: two rows answer to each other's key, which their own vectors'
        # KNNs do not return (their nearest is the row itself): both are misses
        far = int(np.argmin(matrix @ matrix[0]))
        swapped = list(keys)
        swapped[0], swapped[far] = keys[far], keys[0]
        assert rebuild_recall.self_misses(client, index, swapped, matrix, range(40), 64) == [
            *sorted({0, far})
        ]
        engine.close()


def test_copies_written_as_one_vector_are_spread_by_the_first_self_check(
    embedder: Embedder, embedding_backend: str, tmp_path: Path
) -> None:
    """``--identical``: the store as it was before every vector was spread (copies of a text hold
    one vector); the bulk load's self-check writes all but one of each set spread, so the backup
    the restore reads holds none, and nothing is left for the later checks."""
    items = generate("1k", 7).items[:N]
    copies = N - len({i.content for i in items})
    assert copies > 10  # the corpus repeats texts in other projects: copies to spread
    matrix = np.asarray(embedder.embed_many([i.content for i in items]), dtype=np.float32)
    queries = rebuild_recall.query_vectors(embedder, items, 7, 2)
    settings = make_settings(tmp_path / "data", 6399, embedding_backend=embedding_backend)
    lines: list[str] = []
    out = rebuild_recall.curves(
        settings, embedder, items, matrix, queries, range(N), lines.append, identical=True
    )
    checks = {phase: m["repaired"]["check"] for phase, m in out["phases"].items()}
    assert checks["bulk load"]["spread"] == copies
    assert (checks["restore"]["spread"], checks["reindex"]["spread"]) == (0, 0)
    assert all(c["still_missed"] == 0 for c in checks.values())
    assert f"({copies} identical copies spread)" in "".join(lines)
