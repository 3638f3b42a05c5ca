"""The bare-graph twins bench (bench/graph_twins.py) at a small size: every point written and
searched by its own vector, the copies counted, each order and spread run."""

from __future__ import annotations

import numpy as np

from bench import graph_twins
from bench.corpus import generate
from kenning.runtime.embedding import Embedder
from kenning.store import vectors


def test_each_order_and_spread_is_built_and_searched(embedder: Embedder) -> None:
    texts = [i.content for i in generate("1k", 7).items[:200]]
    with_a_copy = sum(texts.count(t) > 1 for t in texts)
    assert with_a_copy > 10
    matrix = np.asarray(embedder.embed_many(texts), dtype=np.float32)
    before = matrix.copy()
    for order in graph_twins.ORDERS:
        for spread in (0.0, vectors.SPREAD):
            got = graph_twins.graph(texts, matrix, order, spread)
            assert (got["size"], got["order"], got["spread"]) == (200, order, spread)
            assert got["with_a_copy"] == with_a_copy
            # EF_RUNTIME 256 over 200 points visits every one: nothing is missed
            assert (got["missed"], got["missed_with_a_copy"]) == (0, 0)
    assert np.array_equal(matrix, before)  # the caller's rows are left as they were
