"""Concurrent embeds share runs (issue 38): the same vectors as one by one, a lone caller runs at
once, and a full queue answers ``overloaded`` at once (below the bound, every caller is served).

A gate around the real model holds the first run until the others have queued, so what is batched
is decided by the test, not by timing."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import pytest

from kenning.core.errors import BackendUnavailable, Overloaded
from kenning.runtime.embedding import BatchingEmbedder, Embedder, Vector
from mcp_server.errors import translate

TEXTS = [
    f"How do I {verb} the {thing} in project {n}?"
    for n, (verb, thing) in enumerate(
        (v, t)
        for v in ("deploy", "test", "pin", "rotate")
        for t in ("api service", "worker queue", "nightly build", "billing client")
    )
]


class Gated:
    """The real model, whose first ``embed_many`` waits until the test opens the gate; records
    the size of every run."""

    def __init__(self, inner: Embedder, fail: bool = False) -> None:
        self.inner = inner
        self.model_name = inner.model_name
        self.dimension = inner.dimension
        self.gate = threading.Event()
        self.entered = threading.Event()
        self.sizes: list[int] = []
        self.fail = fail

    def embed(self, text: str) -> Vector:
        return self.embed_many([text])[0]

    def embed_many(self, texts: list[str]) -> list[Vector]:
        if not self.sizes:
            self.entered.set()
            assert self.gate.wait(60)
        self.sizes.append(len(texts))
        if self.fail and len(self.sizes) > 1:
            raise BackendUnavailable("the embedding model failed: test")
        return self.inner.embed_many(texts)


def _raw(embedder: Embedder) -> Embedder:
    inner: Embedder = getattr(embedder, "inner", embedder)
    return inner


def _wait_queued(batcher: BatchingEmbedder, texts: int) -> None:
    deadline = time.monotonic() + 60
    while batcher.waiting() < texts:
        assert time.monotonic() < deadline, f"only {batcher.waiting()} of {texts} texts queued"
        time.sleep(0.005)


@pytest.mark.both_backends
def test_concurrent_embeds_are_batched_and_give_the_vectors_of_one_by_one(
    embedder: Embedder,
) -> None:
    model = _raw(embedder)
    alone = [model.embed(t) for t in TEXTS]
    gated = Gated(model)
    batcher = BatchingEmbedder(gated, runs=1, max_batch=32, bound=64)
    with ThreadPoolExecutor(len(TEXTS)) as pool:
        first = pool.submit(batcher.embed, TEXTS[0])
        assert gated.entered.wait(60)  # the first caller runs at once, alone
        rest = [pool.submit(batcher.embed, t) for t in TEXTS[1:]]
        _wait_queued(batcher, len(TEXTS) - 1)
        gated.gate.set()
        got = [first.result(60), *(f.result(60) for f in rest)]
    assert gated.sizes == [1, len(TEXTS) - 1]  # the others shared the next run
    assert batcher.batches == 2
    for want, vector in zip(alone, got, strict=True):
        assert float(np.dot(want, vector)) >= 0.999
    # and embed_many through it: the caller's order, the same vectors
    many = batcher.embed_many(TEXTS)
    for want, vector in zip(alone, many, strict=True):
        assert float(np.dot(want, vector)) >= 0.999


def test_a_full_queue_answers_overloaded_at_once_and_below_the_bound_all_are_served(
    embedder: Embedder,
) -> None:
    gated = Gated(_raw(embedder))
    told: list[int] = []
    batcher = BatchingEmbedder(
        gated, runs=1, max_batch=32, bound=3, on_overload=lambda: told.append(1)
    )
    with ThreadPoolExecutor(8) as pool:
        running = pool.submit(batcher.embed, TEXTS[0])
        assert gated.entered.wait(60)
        queued = [pool.submit(batcher.embed, t) for t in TEXTS[1:4]]  # up to the bound: waits
        _wait_queued(batcher, 3)
        with pytest.raises(Overloaded) as refused:
            batcher.embed(TEXTS[4])
        # a bulk import is not refused: it waits for room
        bulk: Future[list[Vector]] = pool.submit(batcher.embed_many, TEXTS[5:7])
        gated.gate.set()
        served = [running.result(60), *(f.result(60) for f in queued)]
        assert len(bulk.result(60)) == 2
    assert len(served) == 4
    assert all(v.shape == (batcher.dimension,) for v in served)
    assert batcher.overloads == 1
    assert told == [1]
    assert refused.value.code == "overloaded"
    # the MCP door's answer: the code first, then what to do
    answer = str(translate(refused.value, "recall"))
    assert answer.startswith("overloaded: the embedder is busy: 3 texts already wait")
    assert "KENNING_EMBEDDING_QUEUE_BOUND" in answer
    # the queue drained: the next caller is served again
    assert batcher.embed(TEXTS[4]).shape == (batcher.dimension,)


def test_a_failed_run_fails_every_caller_of_its_batch(embedder: Embedder) -> None:
    gated = Gated(_raw(embedder), fail=True)
    batcher = BatchingEmbedder(gated, runs=1, max_batch=32, bound=16)
    with ThreadPoolExecutor(4) as pool:
        first = pool.submit(batcher.embed, TEXTS[0])
        assert gated.entered.wait(60)
        rest = [pool.submit(batcher.embed, t) for t in TEXTS[1:4]]
        _wait_queued(batcher, 3)
        gated.gate.set()
        assert first.result(60).shape == (batcher.dimension,)
        for future in rest:
            with pytest.raises(BackendUnavailable, match="test"):
                future.result(60)
    assert gated.sizes == [1, 3]


def test_a_lone_caller_runs_on_its_own_thread_without_a_window(embedder: Embedder) -> None:
    seen: list[str] = []
    model = _raw(embedder)

    class Where:
        model_name, dimension = model.model_name, model.dimension

        def embed(self, text: str) -> Vector:
            return model.embed(text)

        def embed_many(self, texts: list[str]) -> list[Vector]:
            seen.append(threading.current_thread().name)
            return model.embed_many(texts)

    batcher = BatchingEmbedder(Where(), runs=2, max_batch=8, bound=8, window=0.05)
    batcher.embed(TEXTS[0])
    assert seen == [threading.current_thread().name]  # no hop to another thread
    assert batcher.batches == 1
