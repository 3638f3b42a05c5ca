"""Bulk remember: the import path for many memories at once (docs/benchmarks.md, bulk import rate).

Same rules as ``Memories.remember`` -- validated, deduplicated at the same threshold (against the store
AND within the batch), every write audited -- but embedded in batches and written with pipelines, so
the cost is embedding-bound instead of round-trip-bound. The contradiction check of single remember is
not run per item here; run the on-demand check after a large import.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from kenning.context import Context
from kenning.memory import Draft, Memories, same_statement
from kenning.models import Memory, Note, RememberResult
from kenning.store import AuditEvent, digest

BATCH = 256


class Bulk:
    """``remember_many``: one embedding pass and one pipelined round trip of writes per batch."""

    def __init__(self, ctx: Context, memories: Memories, *, workers: int = 2) -> None:
        self.ctx = ctx
        self.memories = memories
        self.workers = max(1, workers)

    def remember_many(self, drafts: Sequence[Draft], *, actor: str, batch: int = BATCH) -> list[RememberResult]:
        """Store every draft that is not a near-duplicate; results in the drafts' order.

        Validation failures raise before anything of that batch is written.
        """
        out: list[RememberResult] = []
        for start in range(0, len(drafts), batch):
            out += self._batch(drafts[start:start + batch], actor)
        return out

    def _batch(self, drafts: Sequence[Draft], actor: str) -> list[RememberResult]:
        memories = [self.memories._validated(d, actor) for d in drafts]  # the one validation path of remember
        vectors = self._embed([m.content for m in memories])
        results = self._deduplicate(memories, vectors)
        rows = [(m, v) for m, v, r in zip(memories, vectors, results, strict=True) if r is None]
        now = self.ctx.clock.now()
        self.ctx.store.memories.write_many([(m, v, [AuditEvent(
            actor=actor or "unknown", action="remember", key=m.key, at=now, after=digest(m.content),
            details={"via": "bulk"})]) for m, v in rows])
        return [r if r is not None else RememberResult("stored", m.key) for m, r in zip(memories, results, strict=True)]

    def _embed(self, texts: list[str]) -> list[Any]:
        """Embed in parallel slices: the ONNX session runs concurrent calls on one intra-op thread each."""
        if self.workers == 1 or len(texts) < 64:
            return self.ctx.embedder.embed_many(texts)
        size = -(-len(texts) // self.workers)
        slices = [texts[i:i + size] for i in range(0, len(texts), size)]
        with ThreadPoolExecutor(self.workers) as pool:
            parts = list(pool.map(self.ctx.embedder.embed_many, slices))
        return [v for part in parts for v in part]

    def _deduplicate(self, memories: list[Memory], vectors: list[Any]) -> list[RememberResult | None]:
        """None for a memory to store; a ``duplicate`` result for one that repeats the store or the batch."""
        threshold = self.ctx.settings.duplicate_threshold
        stored = self.ctx.store.memories.search_many([self.memories.duplicate_search(m.namespace, m.project, v)
                                                       for m, v in zip(memories, vectors, strict=True)])
        results: list[RememberResult | None] = []
        kept: dict[tuple[str, str], list[int]] = {}
        matrix = np.asarray(vectors, dtype=np.float32)
        for i, memory in enumerate(memories):
            hits = stored[i].hits
            if hits and hits[0].similarity >= threshold and same_statement(hits[0].memory.content, memory.content):
                results.append(_duplicate(hits[0].memory.key, hits[0].similarity))
                continue
            group = kept.setdefault((memory.namespace, memory.project), [])
            twin = _closest(matrix, i, group)
            if twin is not None and twin[1] >= threshold and same_statement(memories[twin[0]].content,
                                                                             memory.content):
                results.append(_duplicate(memories[twin[0]].key, twin[1]))
                continue
            group.append(i)
            results.append(None)
        return results

def _closest(matrix: np.ndarray[Any, Any], index: int, earlier: list[int]) -> tuple[int, float] | None:
    if not earlier:
        return None
    sims = matrix[earlier] @ matrix[index]
    best = int(np.argmax(sims))
    return earlier[best], float(sims[best])


def _duplicate(key: str, similarity: float) -> RememberResult:
    return RememberResult("duplicate", key, similarity, notes=(Note("duplicate"),))
