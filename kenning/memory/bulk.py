"""Bulk remember: the import path for many memories at once (docs/benchmarks.md, bulk import rate).

Same rules as ``Memories.remember`` -- validated, deduplicated at the same threshold (against the
store AND the import's earlier lines, the same decision on either engine: kenning.memory.dedup),
checked for contradictions, every write audited -- but embedded in batches and written with
pipelines, so the cost is embedding-bound instead of round-trip-bound.
The contradiction check runs once a batch is written: one pipelined round trip of the gate's KNNs
for the whole batch (each memory meets the store and the rest of its batch, so a pair inside one
batch is found once, from either side), then the same pure check and record as ``remember``
(``Contradictions.on_remember``); a stored draft's result names what it contradicts.

The stages overlap: while batch N is checked for duplicates and written (one writer thread, one
batch at a time, in order), batch N+1 is embedded (ONNX Runtime releases the GIL). Because the
writer takes the batches one after another, batch N+1's duplicate check runs after batch N is
written. A text repeating one of an earlier batch is found in ``Kept`` (what the import stored so
far, compared in numpy), never left to the index finding it.

``plan_many`` is the dry run: the same validation, embedding and duplicate check, nothing written;
``Kept`` holds what its earlier batches would have stored.

A failure part-way reports what landed: a batch whose write was sent is read back from the store
(``_landed``), line by line.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import replace
from typing import Any

import numpy as np

from kenning.core.errors import InvalidInput, KenningError
from kenning.core.models import Memory, Note, RememberResult
from kenning.memory import dedup
from kenning.memory.dedup import Group, Kept
from kenning.memory.memories import Draft, Memories
from kenning.runtime.context import Context
from kenning.store import AuditEvent, Contradiction, digest

BATCH = 256  # 128 measured 5% slower (more per-batch sync points between the two embedding slices)
# the status of a draft an interrupted import did not store (see ``ImportInterrupted``)
FAILED = "failed"
UNKNOWN = "unknown"  # ... and of one whose write was sent but could not be read back
NEW = "new"  # the status ``plan_many`` gives a draft the import would store
Progress = Callable[[int, int], None]  # called with (drafts done, drafts in all) after each batch


class ImportInterrupted(KenningError):
    """A bulk import stopped part-way (the store or the model failed); ``results``
    holds every draft's outcome.

    A draft reported ``stored`` or ``duplicate`` is in the store; one reported ``failed`` is not
    (never sent, or read back after its batch's write failed and not found); one reported
    ``unknown`` was sent in a write that did not answer and the store could not be read back
    either: import the failed and unknown drafts again, the duplicate check finds any that did
    land. ``cause`` is the error that stopped it, whose ``code`` this error carries.
    """

    def __init__(self, cause: KenningError, results: list[RememberResult]) -> None:
        failed = sum(1 for r in results if r.status in (FAILED, UNKNOWN))
        super().__init__(
            f"the import stopped after {len(results) - failed} of {len(results)} drafts: "
            f"{cause.message}",
            hint="import the drafts reported failed again once it is back",
        )
        self.code = cause.code
        self.cause = cause
        self.results = results


class Bulk:
    """``remember_many``: one embedding pass and one pipelined round trip of
    writes per batch, overlapped."""

    def __init__(self, ctx: Context, memories: Memories, *, workers: int = 2) -> None:
        self.ctx = ctx
        self.memories = memories
        self.workers = max(1, workers)

    def remember_many(
        self,
        drafts: Sequence[Draft],
        *,
        actor: str,
        batch: int = BATCH,
        progress: Progress | None = None,
    ) -> list[RememberResult]:
        """Store every draft that is not a near-duplicate; results in the drafts' order.

        Every draft is validated before anything is written: an invalid one raises ``InvalidInput``
        naming it. A store or model failure part-way raises ``ImportInterrupted``
        with each draft's outcome.
        """
        memories = [self._validated(i, d, actor) for i, d in enumerate(drafts)]
        results: list[RememberResult] = []
        try:
            self._run(memories, actor, max(1, batch), results, progress or _quiet)
        except KenningError as exc:
            failed = [RememberResult(FAILED, "") for _ in memories[len(results) :]]
            raise ImportInterrupted(exc, results + failed) from exc
        return results

    def plan_many(
        self,
        drafts: Sequence[Draft],
        *,
        actor: str,
        batch: int = BATCH,
        progress: Progress | None = None,
    ) -> list[RememberResult]:
        """What ``remember_many`` would do, writing nothing: ``new`` for a draft it would store (the
        key it names is never written), ``duplicate`` with the key of the memory or
        earlier draft it repeats.

        Validated first, as ``remember_many``. What the store holds may
        change before the import runs."""
        memories = [self._validated(i, d, actor) for i, d in enumerate(drafts)]
        kept, report, size = Kept(), progress or _quiet, max(1, batch)
        results: list[RememberResult] = []
        with ThreadPoolExecutor(self.workers, thread_name_prefix="kenning-bulk-embed") as embedders:
            for start in range(0, len(memories), size):
                chunk = memories[start : start + size]
                vectors = self._embed(embedders, [m.content for m in chunk])
                for memory, vector, found in zip(
                    chunk, vectors, self._deduplicate(chunk, vectors, kept), strict=True
                ):
                    if found is None:
                        kept.add(memory, vector)
                    results.append(found or RememberResult(NEW, memory.key))
                report(len(results), len(memories))
        return results

    def problems(self, drafts: Sequence[Draft], *, actor: str) -> list[tuple[int, InvalidInput]]:
        """Every draft remember would refuse, with its error
        (``remember_many`` stops at the first)."""
        found: list[tuple[int, InvalidInput]] = []
        for index, draft in enumerate(drafts):
            try:
                self.memories._validated(draft, actor)
            except InvalidInput as exc:
                found.append((index, exc))
        return found

    def _validated(self, index: int, draft: Draft, actor: str) -> Memory:
        try:
            return self.memories._validated(draft, actor)  # the one validation path of remember
        except InvalidInput as exc:
            raise InvalidInput(f"draft {index}: {exc.message}", hint=exc.hint) from exc

    def _run(
        self,
        memories: list[Memory],
        actor: str,
        batch: int,
        results: list[RememberResult],
        progress: Progress,
    ) -> None:
        """Embed batch N+1 while batch N is checked and written; ``results``
        gets each written batch's (a failed one's as ``_landed`` read them back)."""
        kept = Kept()
        with (
            ThreadPoolExecutor(1, thread_name_prefix="kenning-bulk-write") as writer,
            ThreadPoolExecutor(self.workers, thread_name_prefix="kenning-bulk-embed") as embedders,
        ):
            pending: Future[list[RememberResult]] | None = None
            try:
                for start in range(0, len(memories), batch):
                    chunk = memories[start : start + batch]
                    vectors = self._embed(embedders, [m.content for m in chunk])
                    if pending is not None:
                        done, pending = pending, None
                        _collect(done, results)
                        progress(len(results), len(memories))
                    pending = writer.submit(self._write, chunk, vectors, actor, kept)
            finally:
                # also when the embedding failed: what was written is reported
                if pending is not None:
                    _collect(pending, results)
                    progress(len(results), len(memories))

    def _write(
        self, memories: list[Memory], vectors: list[Any], actor: str, kept: Kept
    ) -> list[RememberResult]:
        """The duplicate check (one pipeline of KNNs) and the writes (one
        pipeline of units) of one batch, under the claims ``remember`` takes on each content."""
        claims = {c.key: c for c in (self.memories.claim(m) for m in memories)}
        held = []
        try:
            # in one global order, so two imports of overlapping drafts never wait on each other
            for key in sorted(claims):
                self.memories.wait(claims[key])
                held.append(claims[key])
            return self._checked_write(memories, vectors, actor, kept)
        finally:
            for claim in held:
                with suppress(KenningError):  # the store went away: the claim expires by itself
                    claim.release()

    def _checked_write(
        self, memories: list[Memory], vectors: list[Any], actor: str, kept: Kept
    ) -> list[RememberResult]:
        """Check, write and (once written) run the contradiction check of one batch. A failure
        once the write was sent raises ``BatchFailed`` with what the store holds of the batch."""
        results = self._deduplicate(memories, vectors, kept)
        rows = [(m, v) for m, v, r in zip(memories, vectors, results, strict=True) if r is None]
        try:
            now = self.ctx.clock.now()
            self.ctx.store.memories.write_many([(m, v, [_event(m, actor, now)]) for m, v in rows])
        except KenningError as exc:
            raise BatchFailed(exc, self._landed(memories, results)) from exc
        for memory, vector in rows:
            kept.add(memory, vector)
        try:
            opened = self._contradictions(rows, actor)
        except KenningError as exc:  # every row landed; their check did not finish
            raise BatchFailed(exc, _settled(memories, results, {})) from exc
        return _settled(memories, results, opened)

    def _landed(
        self, memories: list[Memory], decided: list[RememberResult | None]
    ) -> list[RememberResult]:
        """A batch whose write failed part-way, read back from the store: ``stored`` for each
        memory that is there, ``failed`` for one that is not, ``unknown`` for all when the store
        cannot be read either. A duplicate of a line of the batch follows that line."""
        written = [m.key for m, r in zip(memories, decided, strict=True) if r is None]
        try:
            read = self.ctx.store.vectors(written)
        except KenningError:
            return [
                RememberResult(UNKNOWN, "") if r is None or r.key in written else r for r in decided
            ]
        present = {key for key, vector in zip(written, read, strict=True) if vector is not None}
        out: list[RememberResult] = []
        for memory, result in zip(memories, decided, strict=True):
            key = memory.key if result is None else result.key
            if result is not None and key not in written:
                out.append(result)  # a duplicate of a memory the store held before
            elif key in present:
                out.append(result or _stored(key, ()))
            else:
                out.append(RememberResult(FAILED, ""))
        return out

    def _contradictions(
        self, rows: list[tuple[Memory, Any]], actor: str
    ) -> dict[str, list[Contradiction]]:
        """Remember's contradiction check for a written batch: the KNNs in one round trip, the
        records opened per key (on both sides of a pair found inside the batch)."""
        check = self.memories.contradictions
        wanted = [(m, v) for m, v in rows if check.checked(m)]
        searches = [check.nearby(m, v) for m, v in wanted]
        found = iter(self.ctx.store.memories.nearest([n for near in searches for n in near]))
        opened: dict[str, list[Contradiction]] = {}
        for (memory, vector), near in zip(wanted, searches, strict=True):
            nearby = [next(found) for _ in near]
            for record in check.on_remember(memory, vector, actor=actor, nearby=nearby):
                for key in (record.a, record.b):
                    opened.setdefault(key, []).append(record)
        return opened

    def _embed(self, pool: ThreadPoolExecutor, texts: list[str]) -> list[Any]:
        """Embed in interleaved slices (every ``workers``-th text: each slice gets long and short
        texts alike, so no worker idles at the batch's end); the ONNX session runs concurrent
        calls on one thread each."""
        if self.workers == 1 or len(texts) < 64:
            return self.ctx.embedder.embed_many(texts)
        parts = list(
            pool.map(
                self.ctx.embedder.embed_many,
                [texts[i :: self.workers] for i in range(self.workers)],
            )
        )
        out: list[Any] = [None] * len(texts)
        for i, part in enumerate(parts):
            out[i :: self.workers] = part
        return out

    def _deduplicate(
        self, memories: list[Memory], vectors: list[Any], kept: Kept
    ) -> list[RememberResult | None]:
        """None for a memory to store; a ``duplicate`` result for one that repeats the store, an
        earlier batch of this import (``kept``) or an earlier line of its batch
        (kenning.memory.dedup: the same decision on either engine)."""
        threshold = self.ctx.settings.duplicate_threshold
        matrix = np.asarray(vectors, dtype=np.float32)
        stored = self._store_candidates(memories, matrix, threshold)
        before = kept.near(memories, matrix, threshold)
        results: list[RememberResult | None] = []
        taken: dict[Group, list[int]] = {}
        for i, memory in enumerate(memories):
            group = taken.setdefault((memory.namespace, memory.project), [])
            lines = [
                (memories[j], float(matrix[j] @ matrix[i]))
                for j in dedup.within(matrix, i, group, threshold)
            ]
            found = dedup.duplicate_of(memory, [*stored[i], *before[i], *lines], threshold)
            if found is None:
                group.append(i)
            results.append(None if found is None else _duplicate(found[0].key, found[1]))
        return results

    def _store_candidates(
        self, memories: list[Memory], matrix: np.ndarray[Any, Any], threshold: float
    ) -> list[list[dedup.Candidate]]:
        """Per memory, the store's rows near the threshold among its KNN's ``dedup.POOL``,
        re-scored by exact cosine over their stored vectors (one round trip for them all)."""
        searches = [
            replace(
                self.memories.duplicate_search(m.namespace, m.project, v),
                knn=dedup.POOL,
                limit=dedup.POOL,
            )
            for m, v in zip(memories, matrix, strict=True)
        ]
        near = [
            [h.memory for h in found.hits if h.similarity >= threshold - dedup.MARGIN]
            for found in self.ctx.store.memories.search_many(searches)
        ]
        keys = sorted({m.key for rows in near for m in rows})
        stored = dict(zip(keys, self.ctx.store.vectors(keys), strict=True))
        return [
            [(m, dedup.cosine(v, matrix[i])) for m in rows if (v := stored[m.key]) is not None]
            for i, rows in enumerate(near)
        ]


class BatchFailed(Exception):
    """A batch's write or contradiction check failed: ``cause``, and the batch's
    ``results`` as far as the store holds them."""

    def __init__(self, cause: KenningError, results: list[RememberResult]) -> None:
        super().__init__(cause.message)
        self.cause = cause
        self.results = results


def _collect(batch: Future[list[RememberResult]], results: list[RememberResult]) -> None:
    """Add a written batch's results; for a failed batch, what landed of it, then its error."""
    try:
        results += batch.result()
    except BatchFailed as exc:
        results += exc.results
        raise exc.cause from exc


def _event(memory: Memory, actor: str, now: float) -> AuditEvent:
    return AuditEvent(
        actor=actor or "unknown",
        action="remember",
        key=memory.key,
        at=now,
        after=digest(memory.content),
        details={"via": "bulk"},
    )


def _settled(
    memories: list[Memory],
    decided: list[RememberResult | None],
    opened: dict[str, list[Contradiction]],
) -> list[RememberResult]:
    return [
        r if r is not None else _stored(m.key, opened.get(m.key, ()))
        for m, r in zip(memories, decided, strict=True)
    ]


def _quiet(done: int, total: int) -> None:
    """No progress report."""


def _stored(key: str, opened: Sequence[Contradiction]) -> RememberResult:
    notes = tuple(Note("contradiction", other=c.other(key), contradiction=c.id) for c in opened)
    return RememberResult("stored", key, notes=notes)


def _duplicate(key: str, similarity: float) -> RememberResult:
    return RememberResult("duplicate", key, similarity, notes=(Note("duplicate"),))
