"""The torch-free export (kenning.runtime.bert_onnx) against vectors recorded with torch.

fixtures/reference_vectors.npz holds 32 texts and three sets of their vectors, recorded once on
this repository's machine with torch 2.13.0+cpu: ``sentence_transformers`` (sentence-transformers
6.2.0, the reference backend), ``torch_export_fp32`` and ``torch_export_int8`` (the files the
TorchScript export of commit 714967d wrote, and their int8 quantisation). No torch is needed to
run these tests: they prove the export that replaced torch's writes the same model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from kenning.core.errors import BackendUnavailable
from kenning.runtime import bert_onnx
from kenning.runtime.embedding import OnnxEmbedder, default_model_path, ensure_int8

FIXTURE = Path(__file__).parent / "fixtures" / "reference_vectors.npz"
# ONNX Runtime's int8 kernels on AVX-512 VNNI round otherwise than on AVX2 (../shared/PERF-NOTES.md)
CPUINFO = Path("/proc/cpuinfo")
VNNI = CPUINFO.exists() and "avx512_vnni" in CPUINFO.read_text(encoding="utf-8", errors="replace")


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    with np.load(FIXTURE, allow_pickle=False) as data:
        return {name: data[name] for name in data.files}


@pytest.fixture
def exported(fresh_onnx: Path) -> Path:
    return fresh_onnx  # the session's fresh export (conftest.py)


def _vectors(onnx_file: Path, texts: list[str], *, quantized: bool = False) -> Any:
    embedder = OnnxEmbedder(default_model_path(), onnx_file, quantized=quantized)
    return np.array(embedder.embed_many(texts), dtype=np.float32)


def test_the_fixture_is_what_it_says(recorded: dict[str, Any]) -> None:
    texts = recorded["texts"]
    assert len(texts) == 32
    for name in ("sentence_transformers", "torch_export_fp32", "torch_export_int8"):
        assert recorded[name].shape == (32, 384), name
        assert np.allclose(np.linalg.norm(recorded[name], axis=1), 1.0, atol=1e-5), name
    # positive control: the int8 vectors differ from fp32 ones measurably, so an exact match
    # below is no accident of a too-coarse comparison
    cosines = (recorded["sentence_transformers"] * recorded["torch_export_int8"]).sum(axis=1)
    assert cosines.min() < 0.99


def test_fp32_export_matches_sentence_transformers_and_the_torch_export(
    recorded: dict[str, Any], exported: Path
) -> None:
    got = _vectors(exported, [str(t) for t in recorded["texts"]])
    cosines = (got * recorded["sentence_transformers"]).sum(axis=1)
    assert cosines.min() >= 0.999
    assert float(np.abs(got - recorded["torch_export_fp32"]).max()) < 1e-5


def test_int8_export_matches_the_torch_exports_int8(
    recorded: dict[str, Any], exported: Path
) -> None:
    """A store written with the old int8 vectors still finds its memories: the same vectors where
    ONNX Runtime takes the same int8 kernels as the machine that recorded them (AVX2), and on an
    AVX-512 VNNI box, whose kernels round differently, vectors as near to them as int8 is to fp32
    (measured there: cosine 0.962 at the least to the recorded int8, 0.981 to fp32; the recorded
    int8 are 0.979 from fp32)."""
    got = _vectors(ensure_int8(exported), [str(t) for t in recorded["texts"]], quantized=True)
    if not VNNI:
        assert float(np.abs(got - recorded["torch_export_int8"]).max()) < 1e-4
        assert (got * recorded["torch_export_int8"]).sum(axis=1).min() >= 0.9999
    assert (got * recorded["torch_export_int8"]).sum(axis=1).min() >= 0.93
    assert (got * recorded["sentence_transformers"]).sum(axis=1).min() >= 0.95


def test_no_torch_is_imported_by_the_export(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = (
        "import sys; from pathlib import Path; from kenning.runtime import bert_onnx;"
        "from kenning.runtime.embedding import default_model_path;"
        f"bert_onnx.export(Path(default_model_path()), Path({str(tmp_path / 'm.onnx')!r}));"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'transformers', 'sentence_transformers')))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=False, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
    assert (tmp_path / "m.onnx").stat().st_size > 80_000_000


def test_safetensors_reader_round_trips(tmp_path: Path) -> None:
    import json
    import struct

    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.array([7, 8], dtype=np.int64)
    header = {
        "__metadata__": {"format": "pt"},
        "a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
        "b": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]},
    }
    raw = json.dumps(header).encode()
    (tmp_path / "t.safetensors").write_bytes(
        struct.pack("<Q", len(raw)) + raw + a.tobytes() + b.tobytes()
    )
    got = bert_onnx.read_safetensors(tmp_path / "t.safetensors")
    assert np.array_equal(got["a"], a)
    assert np.array_equal(got["b"], b)
    assert set(got) == {"a", "b"}


def test_a_folder_that_is_no_bert_model_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"model_type": "llama"}', encoding="utf-8")
    with pytest.raises(BackendUnavailable, match="not a BERT model"):
        bert_onnx.build_model(tmp_path)
