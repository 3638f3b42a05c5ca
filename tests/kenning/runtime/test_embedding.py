"""The embedder the session uses (the configured default backend):
shape, norm, batching, meaning."""

from __future__ import annotations

import numpy as np

from kenning.runtime.embedding import Embedder


def test_vectors_are_unit_length_float32_of_the_model_dimension(embedder: Embedder) -> None:
    vector = embedder.embed("Valkey keeps every memory as a hash")
    assert embedder.dimension == 384
    assert vector.shape == (384,)
    assert vector.dtype == np.float32
    assert abs(float(np.linalg.norm(vector)) - 1.0) < 1e-4


def test_batch_matches_single_embedding(embedder: Embedder) -> None:
    texts = ["pin torch to the CPU build", "ruff replaces flake8", "deploy with Kamal on Fridays"]
    batch = embedder.embed_many(texts)
    assert len(batch) == 3
    for text, vector in zip(texts, batch, strict=True):
        assert float(np.dot(vector, embedder.embed(text))) > 0.9999


def test_empty_batch_is_empty(embedder: Embedder) -> None:
    assert embedder.embed_many([]) == []


def test_paraphrases_are_closer_than_unrelated_text(embedder: Embedder) -> None:
    a = embedder.embed("How do I run the test suite?")
    b = embedder.embed("What is the command to execute the tests?")
    c = embedder.embed("The office coffee machine is broken again")
    assert float(np.dot(a, b)) > float(np.dot(a, c)) + 0.3


def test_model_name_is_recorded(embedder: Embedder) -> None:
    assert embedder.model_name == "all-MiniLM-L6-v2+int8"  # the default (auto) for a new store
