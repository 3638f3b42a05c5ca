"""The ONNX backend reproduces the sentence-transformers reference vectors (the
gate for making it default); the reference vectors are recorded (test_bert_onnx.py), so no torch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import SecretStr

from kenning.core.errors import EmbeddingMismatch
from kenning.core.settings import Settings
from kenning.runtime.embedding import (
    BatchingEmbedder,
    OnnxEmbedder,
    default_model_path,
    ensure_int8,
    ensure_onnx,
    load_embedder,
    mean_pool,
    resolve_backend,
)
from kenning.store.client import connection_url
from kenning_cli.services import load_model, open_engine

FIXTURE = Path(__file__).parent / "fixtures" / "reference_vectors.npz"

TEXTS = [
    "pytest -x -q runs the unit suite of project atlas-api",
    "Decision: we pinned numpy<2 because torch 2.1 wheels crashed with ABI errors (E4021).",
    "Use ruff with line-length 110; never reformat files you do not own.",
    "deploy: `make release && kubectl rollout restart deploy/web -n prod`",
    "Préférence: l'utilisateur veut des messages de commit en anglais, à l'impératif.",
    "a",
    "Bug: login hangs after 30 s. Cause: the Valkey pool was exhausted by SUBSCRIBE clients. "
    "Fix: a dedicated connection for pub/sub. " * 12,  # longer than the 256-token window
    "TypeError: 'NoneType' object is not subscriptable in settings.py line 42",
]


@pytest.fixture
def onnx_file(fresh_onnx: Path) -> Path:
    return fresh_onnx  # the session's fresh export (conftest.py)


def _reference(texts: list[str]) -> list[np.ndarray[Any, Any]]:
    """sentence-transformers' vectors of ``texts``, as recorded in the fixture."""
    with np.load(FIXTURE, allow_pickle=False) as data:
        recorded = dict(
            zip([str(t) for t in data["texts"]], data["sentence_transformers"], strict=True)
        )
    return [recorded[text] for text in texts]


def test_onnx_vectors_match_the_reference(onnx_file: Path) -> None:
    onnx = OnnxEmbedder(default_model_path(), onnx_file)
    expected = _reference(TEXTS)
    batched = onnx.embed_many(TEXTS)
    single = [onnx.embed(t) for t in TEXTS]
    assert onnx.dimension == len(expected[0]) == 384
    for want, got_batch, got_one in zip(expected, batched, single, strict=True):
        assert float(np.dot(want, got_batch)) >= 0.999
        assert float(np.dot(want, got_one)) >= 0.999
        assert abs(float(np.linalg.norm(got_batch)) - 1.0) < 1e-5


def test_export_happens_once_and_is_reused(onnx_file: Path) -> None:
    before = onnx_file.stat().st_mtime_ns
    again = ensure_onnx(default_model_path(), onnx_file.parent)
    assert again == onnx_file
    assert again.stat().st_mtime_ns == before
    assert not list(onnx_file.parent.glob("*.tmp"))


def test_setting_selects_the_onnx_backend(onnx_file: Path, tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / onnx_file.name).symlink_to(onnx_file)  # reuse the export, do not redo it
    settings = Settings(
        _env_file=None, data_dir=tmp_path, model_dir=tmp_path / "models", embedding_backend="onnx"
    )
    embedder = load_embedder(settings)
    assert isinstance(embedder, BatchingEmbedder)  # concurrent callers share runs (issue 38)
    assert isinstance(embedder.inner, OnnxEmbedder)
    assert embedder.model_name == "all-MiniLM-L6-v2"


def test_mean_pool_ignores_padding_and_normalises() -> None:
    hidden = np.array([[[3.0, 4.0], [100.0, 100.0]], [[1.0, 0.0], [0.0, 1.0]]], dtype=np.float32)
    mask = np.array([[1, 0], [1, 1]], dtype=np.int64)
    pooled = mean_pool(hidden, mask)
    assert np.allclose(pooled[0], [0.6, 0.8])
    assert np.allclose(pooled[1], [2**-0.5, 2**-0.5])


def test_int8_backend_is_close_but_pinned_as_another_model(onnx_file: Path) -> None:
    int8_file = ensure_int8(onnx_file)
    assert int8_file.stat().st_size < onnx_file.stat().st_size / 2
    fp32 = OnnxEmbedder(default_model_path(), onnx_file)
    int8 = OnnxEmbedder(default_model_path(), int8_file, quantized=True)
    assert int8.model_name == fp32.model_name + "+int8"  # a store written by one refuses the other
    batched = int8.embed_many(TEXTS)
    for want, got in zip(fp32.embed_many(TEXTS), batched, strict=True):
        assert float(np.dot(want, got)) >= 0.97
    # a text's int8 vector never depends on the texts embedded beside it (bulk import == remember)
    assert all(
        np.array_equal(alone, int8.embed(text)) for alone, text in zip(batched, TEXTS, strict=True)
    )


def test_auto_means_int8_for_the_bundled_model_unless_the_store_was_written_in_fp32() -> None:
    auto = Settings(_env_file=None)
    assert auto.embedding_backend == "auto"
    assert resolve_backend(auto) == "onnx-int8"  # a new store
    assert resolve_backend(auto, "all-MiniLM-L6-v2+int8") == "onnx-int8"
    # fp32 vectors: keep them, never refuse
    assert resolve_backend(auto, "all-MiniLM-L6-v2") == "onnx"
    # not measured
    assert resolve_backend(Settings(_env_file=None, embedding_model="/models/other")) == "onnx"
    assert (
        resolve_backend(Settings(_env_file=None, embedding_backend="onnx"), "all-MiniLM-L6-v2+int8")
        == "onnx"
    )


def test_a_store_written_in_fp32_opens_with_auto_and_a_new_store_gets_int8(
    onnx_file: Path, tmp_path: Path, settings: Settings
) -> None:
    int8_file = ensure_int8(onnx_file)
    (tmp_path / "models").mkdir()
    for made in (onnx_file, int8_file):  # reuse the session's exports, do not redo them
        (tmp_path / "models" / made.name).symlink_to(made)
    shared = settings.model_copy(
        update={
            "data_dir": tmp_path,
            "model_dir": tmp_path / "models",
            "valkey_url": SecretStr(connection_url(settings)),
        }
    )
    old = shared.model_copy(update={"key_prefix": settings.key_prefix + "old:"})
    fresh = shared.model_copy(update={"key_prefix": settings.key_prefix + "new:"})
    # the store of an earlier release: its vectors were pinned as fp32
    fp32 = OnnxEmbedder(default_model_path(), onnx_file)
    first = open_engine(old.model_copy(update={"embedding_backend": "onnx"}), fp32)
    assert load_model(old).model_name == "all-MiniLM-L6-v2"
    # opens, no EmbeddingMismatch
    assert open_engine(old).ctx.embedder.model_name == "all-MiniLM-L6-v2"
    with pytest.raises(EmbeddingMismatch):  # positive control: int8 forced on it is refused
        open_engine(old.model_copy(update={"embedding_backend": "onnx-int8"}))
    assert open_engine(fresh).ctx.embedder.model_name == "all-MiniLM-L6-v2+int8"
    for prefix in (old.key_prefix, fresh.key_prefix):
        for key in first.store.client.scan_iter(match=f"{prefix}*"):
            first.store.client.delete(key)


@pytest.mark.parametrize("quantized", [False, True])
def test_one_text_is_tokenized_by_encode_with_the_ids_and_vector_of_encode_batch(
    onnx_file: Path, quantized: bool
) -> None:
    model_file = ensure_int8(onnx_file) if quantized else onnx_file
    onnx = OnnxEmbedder(default_model_path(), model_file, quantized=quantized)
    for text in TEXTS:
        alone, batched = onnx.feeds([text]), onnx.feeds([text], batch=True)
        assert set(alone) == set(batched)
        for name, value in alone.items():
            assert np.array_equal(value, batched[name]), (text[:30], name)
        assert np.array_equal(onnx.embed(text), onnx.embed_many([text])[0])
    # positive control: two texts of different lengths are padded to the longer one
    pair = onnx.feeds([TEXTS[0], TEXTS[5]])
    assert pair["input_ids"].shape[0] == 2
    assert pair["attention_mask"][1].sum() < pair["attention_mask"][0].sum()
