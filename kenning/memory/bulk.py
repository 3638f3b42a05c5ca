"""Bulk remember: the import path for many memories at once (docs/benchmarks.md, bulk import rate).

Same rules as ``Memories.remember`` -- validated, deduplicated at the same threshold (against the
store AND within the batch), checked for contradictions, every write audited -- but embedded in
batches and written with pipelines, so the cost is embedding-bound instead of round-trip-bound.
The contradiction check runs once a batch is written: one pipelined round trip of the gate's KNNs
for the whole batch (each memory meets the store and the rest of its batch, so a pair inside one
batch is found once, from either side), then the same pure check and record as ``remember``
(``Contradictions.on_remember``); a stored draft's result names what it contradicts.

The stages overlap: while batch N is checked for duplicates and written (one writer thread, one
batch at a time, in order), batch N+1 is embedded (ONNX Runtime releases the GIL). Because the
writer takes the batches one after another, batch N+1's duplicate check runs after batch N is
written: a text repeating one of the previous batch is found in the store, exactly as when the
batches ran one after the other.

``plan_many`` is the dry run: the same validation, embedding and duplicate check, nothing written.
Its earlier batches are not in the store, so each batch is also checked against what they would have
stored (``Kept``), as the store check of the real import finds them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import numpy as np

from kenning.core.errors import InvalidInput, KenningError
from kenning.core.models import Memory, Note, RememberResult
from kenning.memory.memories import Draft, Memories
from kenning.memory.sameness import same_event, same_statement, window
from kenning.runtime.context import Context
from kenning.store import AuditEvent, Contradiction, digest

BATCH = 256  # 128 measured 5% slower (more per-batch sync points between the two embedding slices)
# the status of a draft an interrupted import did not store (see ``ImportInterrupted``)
FAILED = "failed"
NEW = "new"  # the status ``plan_many`` gives a draft the import would store
Group = tuple[str, str]  # (namespace, project): the scope of the duplicate check
Progress = Callable[[int, int], None]  # called with (drafts done, drafts in all) after each batch


class ImportInterrupted(KenningError):
    """A bulk import stopped part-way (the store or the model failed); ``results``
    holds every draft's outcome.

    A draft reported ``stored`` or ``duplicate`` is in the store; one reported ``failed`` may or may
    not be (its batch's write did not answer): import the failed drafts again, the duplicate check
    finds any that did land. ``cause`` is the error that stopped it, whose
    ``code`` this error carries.
    """

    def __init__(self, cause: KenningError, results: list[RememberResult]) -> None:
        failed = sum(1 for r in results if r.status == FAILED)
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
        gets each written batch's."""
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
                        results += done.result()
                        progress(len(results), len(memories))
                    pending = writer.submit(self._write, chunk, vectors, actor)
            finally:
                # also when the embedding failed: what was written is reported
                if pending is not None:
                    results += pending.result()
                    progress(len(results), len(memories))

    def _write(
        self, memories: list[Memory], vectors: list[Any], actor: str
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
            return self._checked_write(memories, vectors, actor)
        finally:
            for claim in held:
                claim.release()

    def _checked_write(
        self, memories: list[Memory], vectors: list[Any], actor: str
    ) -> list[RememberResult]:
        results = self._deduplicate(memories, vectors)
        rows = [(m, v) for m, v, r in zip(memories, vectors, results, strict=True) if r is None]
        now = self.ctx.clock.now()
        self.ctx.store.memories.write_many(
            [
                (
                    m,
                    v,
                    [
                        AuditEvent(
                            actor=actor or "unknown",
                            action="remember",
                            key=m.key,
                            at=now,
                            after=digest(m.content),
                            details={"via": "bulk"},
                        )
                    ],
                )
                for m, v in rows
            ]
        )
        opened = self._contradictions(rows, actor)
        return [
            r if r is not None else _stored(m.key, opened.get(m.key, ()))
            for m, r in zip(memories, results, strict=True)
        ]

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
        self, memories: list[Memory], vectors: list[Any], earlier: Kept | None = None
    ) -> list[RememberResult | None]:
        """None for a memory to store; a ``duplicate`` result for one that repeats the store or
        the batch (or, in a dry run, what an ``earlier`` batch would have stored)."""
        threshold = self.ctx.settings.duplicate_threshold
        stored = self.ctx.store.memories.search_many(
            [
                self.memories.duplicate_search(m.namespace, m.project, v)
                for m, v in zip(memories, vectors, strict=True)
            ]
        )
        results: list[RememberResult | None] = []
        kept: dict[Group, list[int]] = {}
        matrix = np.asarray(vectors, dtype=np.float32)
        before = (
            earlier.nearest(memories, matrix) if earlier is not None else [None] * len(memories)
        )
        for i, memory in enumerate(memories):
            hits = stored[i].hits
            if hits and hits[0].similarity >= threshold and _repeats(hits[0].memory, memory):
                results.append(_duplicate(hits[0].memory.key, hits[0].similarity))
                continue
            group = kept.setdefault((memory.namespace, memory.project), [])
            twin = _closest(matrix, i, group)
            near = (memories[twin[0]], twin[1]) if twin is not None else None
            prior = before[i]
            if prior is not None and (near is None or prior[1] > near[1]):
                near = prior
            if near is not None and near[1] >= threshold and _repeats(near[0], memory):
                results.append(_duplicate(near[0].key, near[1]))
                continue
            group.append(i)
            results.append(None)
        return results


class Kept:
    """What a dry run's earlier batches would have stored, per ``Group``:
    its stand-in for the store.

    The vectors of a group sit in one array that doubles when full, so a batch is compared with
    all of them in one matrix product (a row at a time would read the
    whole array once per draft)."""

    def __init__(self) -> None:
        self.memories: dict[Group, list[Memory]] = {}
        self.rows: dict[Group, np.ndarray[Any, Any]] = {}

    def add(self, memory: Memory, vector: Any) -> None:
        group = (memory.namespace, memory.project)
        items = self.memories.setdefault(group, [])
        rows = self.rows.get(group)
        if rows is None or len(items) == len(rows):
            grown = np.empty((max(BATCH, 2 * len(items)), len(vector)), dtype=np.float32)
            if rows is not None:
                grown[: len(items)] = rows
            self.rows[group] = rows = grown
        rows[len(items)] = vector
        items.append(memory)

    def nearest(
        self, memories: list[Memory], matrix: np.ndarray[Any, Any]
    ) -> list[tuple[Memory, float] | None]:
        """For each memory, the nearest kept one of its group and their
        similarity (None: none kept)."""
        out: list[tuple[Memory, float] | None] = [None] * len(memories)
        groups: dict[Group, list[int]] = {}
        for i, memory in enumerate(memories):
            groups.setdefault((memory.namespace, memory.project), []).append(i)
        for group, indices in groups.items():
            items = self.memories.get(group)
            if not items:
                continue
            sims = self.rows[group][: len(items)] @ matrix[indices].T
            best = sims.argmax(axis=0)
            for column, i in enumerate(indices):
                out[i] = items[int(best[column])], float(sims[best[column], column])
        return out


def _repeats(earlier: Memory, memory: Memory) -> bool:
    """Whether ``memory`` says what ``earlier`` (its nearest) says about the
    same event: remember's rule."""
    return same_statement(earlier.content, memory.content) and same_event(
        earlier.event_date, memory.event_date, window(memory)
    )


def _quiet(done: int, total: int) -> None:
    """No progress report."""


def _closest(
    matrix: np.ndarray[Any, Any], index: int, earlier: list[int]
) -> tuple[int, float] | None:
    if not earlier:
        return None
    sims = matrix[earlier] @ matrix[index]
    best = int(np.argmax(sims))
    return earlier[best], float(sims[best])


def _stored(key: str, opened: Sequence[Contradiction]) -> RememberResult:
    notes = tuple(Note("contradiction", other=c.other(key), contradiction=c.id) for c in opened)
    return RememberResult("stored", key, notes=notes)


def _duplicate(key: str, similarity: float) -> RememberResult:
    return RememberResult("duplicate", key, similarity, notes=(Note("duplicate"),))
