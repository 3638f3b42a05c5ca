"""The scale point end to end at a small size: its own private Valkey, the store's
bulk path, every measurement."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import scale
from kenning.runtime.embedding import Embedder
from tests.conftest import make_settings

N = 1_500


def test_a_small_scale_point_loads_every_row_and_measures_each_stage(
    embedder: Embedder, embedding_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # never the user's vector cache
    base = make_settings(tmp_path / "data", 6399, embedding_backend=embedding_backend)
    lines: list[str] = []
    out = scale.execute(
        N, embedder, base, seed=7, queries=10, progress=lines.append, base_size="1k", label="1.5k"
    )
    assert out["corpus"] == {"size": "1.5k", "seed": 7, "items": N, "projects": 29}
    assert out["import"]["stored"] == N
    assert out["import"]["bytes_per_memory"] > 1536  # at least the float32 vector
    point = out["scale_point"]
    # plus what the remember stage stored
    assert sum(i["num_docs"] for i in point["indexes"].values()) >= N
    assert point["vectors"]["base_items"] == 1000
    # 10 each of verbatim, paraphrase, identifier
    assert out["latency"]["recall"]["total"]["n"] == 30.0
    # the near-duplicate family, up to 100 writes
    assert 90 <= out["latency"]["remember"]["total"]["n"] <= 100
    assert point["floors"]["bare_knn"]["n"] == 30.0
    assert point["ratio_recall_p50_over_floor"] > 0
    curves = point["hnsw_recall"]["per_index"]
    assert set(curves) == {"memories"}  # the one index over every namespace
    for measured in curves.values():
        assert [c["ef_runtime"] for c in measured["curve"]] == list(scale.EF_CURVE)
        widest = measured["curve"][-1]
        # EF_RUNTIME 256 over a few hundred rows: near exhaustive
        assert widest["recall@10_within_0.01"] >= 0.9
        assert all(
            0.0 <= c["recall@10"] <= c["recall@10_within_0.01"] <= 1.0 for c in measured["curve"]
        )
    assert not any("failed" in line for line in lines)


def test_loading_stops_before_the_server_outgrows_the_limit(
    embedder: Embedder, embedding_backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    base = make_settings(tmp_path / "data", 6399, embedding_backend=embedding_backend)
    with pytest.raises(scale.TooBig, match="a smaller --size fits"):
        scale.execute(
            N,
            embedder,
            base,
            seed=7,
            queries=10,
            progress=lambda _: None,
            base_size="1k",
            memory_limit=1024,
        )
