"""The bundled model exported to ONNX afresh, into a folder of the session's own (never the user's
model cache, which the rest of the suite reuses): once per session, for the export tests of
test_bert_onnx.py and test_embedding_onnx.py, each of which used to export (and quantise) its
own copy of the same file."""

from __future__ import annotations

from pathlib import Path

import pytest

from kenning.runtime.embedding import default_model_path, ensure_onnx


@pytest.fixture(scope="session")
def fresh_onnx(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The fp32 export as ``ensure_onnx`` writes it (in a child process) when it is missing;
    ``ensure_int8`` beside it quantises it once for both modules."""
    return ensure_onnx(default_model_path(), tmp_path_factory.mktemp("fresh-models"))
