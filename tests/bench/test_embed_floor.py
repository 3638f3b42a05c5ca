"""The embedding-floor diagnostic's cases, run briefly on the real model: every case measured,
stated against the hot one (no timing asserted)."""

from __future__ import annotations

from bench import embed_floor
from kenning.runtime.embedding import Embedder


def test_every_case_is_measured_against_the_hot_embedding(embedder: Embedder) -> None:
    result = embed_floor.measure(embedder, rounds=2)
    assert set(result) == {
        "hot",
        "sleep_10ms",
        "sleep_200ms",
        "spin_200ms",
        "fresh_thread",
        "pool_hop",
        "through_queue_200ms",
    }
    for entry in result.values():
        assert entry["n"] == 2
        assert entry["p50_ms"] > 0
        assert entry["over_hot"] > 0
    assert result["hot"]["over_hot"] == 1.0
