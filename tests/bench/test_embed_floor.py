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
    # the steps are timed on the embedding's own thread, not through the queue's
    for case, entry in result.items():
        steps = [entry.get(f"{s}_p50_ms") for s in embed_floor.STEPS]
        if case == "through_queue_200ms":
            assert steps == [None, None, None]
        else:
            assert all(s is not None and 0 < s < entry["p95_ms"] for s in steps), case


def test_variants_are_interleaved_and_each_read_against_its_own_hot(embedder: Embedder) -> None:
    both = {
        "default": embed_floor.Staged(embedder),
        "encode_batch": embed_floor.Staged(embedder, batch=True),
    }
    result = embed_floor.compare(both, rounds=1)
    assert set(result) == {"default", "encode_batch"}
    for cases in result.values():
        assert cases["hot"]["over_hot"] == 1.0
        assert cases["sleep_200ms"]["n"] == 1
