"""The scale point's corpus and vectors (bench/scale_vectors.py) at a small
size, with the real model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from bench.corpus import generate
from bench.scale import exact_top
from bench.scale_vectors import group_key, scale_corpus, scale_vectors
from kenning.runtime.embedding import Embedder

N = 2_500  # the 1k corpus and one and a half replicas


def test_the_scale_corpus_is_the_base_corpus_then_renamed_replicas_of_other_seeds() -> None:
    corpus = scale_corpus(N, seed=7, base_size="1k")
    base = generate("1k", 7).items
    assert len(corpus.items) == N
    assert len({i.uid for i in corpus.items}) == N
    assert corpus.items[:1000] == base
    replica = corpus.items[1000:2000]
    assert {i.project.rsplit("-", 1)[1] for i in replica if i.project != "global"} == {"r1"}
    assert {i.project.removesuffix("-r1") for i in replica if i.project != "global"} <= set(
        generate("1k", 8).projects()
    )
    changed = sum(1 for a, b in zip(base, replica, strict=True) if a.content != b.content)
    assert changed > 900  # another seed's values, not copies


def test_vectors_keep_the_base_embeddings_and_derive_the_rest_near_a_same_scenario_source(
    embedder: Embedder, tmp_path: Path
) -> None:
    corpus = scale_corpus(N, seed=7, base_size="1k")
    calls: list[int] = []

    def embed_many(texts: list[str]) -> list[Any]:
        calls.append(len(texts))
        return embedder.embed_many(texts)

    matrix, made = scale_vectors(
        embed_many,
        corpus,
        model=embedder.model_name,
        backend="test",
        seed=7,
        base_size="1k",
        folder=tmp_path,
        progress=lambda _: None,
    )
    assert matrix.shape == (N, embedder.dimension)
    assert np.allclose(np.linalg.norm(matrix, axis=1), 1.0, atol=1e-4)
    first = corpus.items[0].content
    # replica 0 is real
    assert float(matrix[0] @ np.asarray(embedder.embed(first), dtype=np.float32)) > 0.999
    # a derived vector sits about as far from the base as real memories sit
    # from their nearest neighbour
    base, derived = matrix[:1000], matrix[1000:]
    nearest = (derived @ base.T).max(axis=1)
    assert abs(float(np.median(nearest)) - made["base_nn_cosine_median"]) < 0.08
    assert float(np.min(nearest)) < 0.999  # noise made them new points, not copies
    # the nearest base row of a derived one is of its own group (scenario, or
    # fillers of its namespace)
    groups = [group_key(i) for i in corpus.items]
    closest = (derived @ base.T).argmax(axis=1)
    same = sum(1 for i, j in enumerate(closest) if groups[1000 + i] == groups[j])
    assert same / len(closest) > 0.8
    again, _ = scale_vectors(
        embed_many,
        corpus,
        model=embedder.model_name,
        backend="test",
        seed=7,
        base_size="1k",
        folder=tmp_path,
        progress=lambda _: None,
    )
    assert len(calls) == 1  # the base set was embedded once; the second call read both caches
    assert np.array_equal(again, matrix)


def test_exact_top_gives_the_best_cosines_over_the_chosen_rows_best_first() -> None:
    rng = np.random.default_rng(1)
    rows = rng.standard_normal((300, 8)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    queries = rows[:5] + 0.1
    chosen = list(range(0, 300, 3))
    best = exact_top(rows, chosen, queries, 4)
    expected = [np.sort(rows[chosen] @ q)[::-1][:4] for q in queries]
    assert np.allclose(best, expected, atol=1e-6)
