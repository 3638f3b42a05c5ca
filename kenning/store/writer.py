"""Writes that happen behind the call that asked for them: one thread, a bounded queue, a barrier.

A recall's log entry and counter touch (``Store.log_recall``) are written here so the recall's reply
does not wait for them. The rules:

- FIFO, one thread per writer (started on first use), so writes land in the
  order they were asked for.
- Bounded: when the queue is full (or the writer is closed, or built with no room) the caller writes
  the job itself, synchronously -- a write is never dropped to keep up.
- ``flush()`` returns once every job accepted before it was called has been written (or given up).
  Readers of what the jobs write call it first: read-your-writes within the process.
- A failed job is logged and tried once more; a job that fails twice is logged, counted in
  ``failures`` and reported to each observer. It never raises into the
  caller, now or in a later call.
- ``close()`` drains the queue and stops the thread; jobs asked for afterwards
  are written in the caller.
"""

from __future__ import annotations

import atexit
import logging
import queue
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import valkey

from kenning.core.errors import StoreError
from kenning.store.client import call

log = logging.getLogger(__name__)

Job = Callable[[], object]
Observer = Callable[[], None]  # called on every job given up after its retry


class Writer:
    def __init__(self, name: str, capacity: int) -> None:
        """``capacity``: how many jobs may wait; 0 writes every job in its caller (no thread)."""
        self.name = name
        self.capacity = capacity
        # jobs given up after their retry (the metric kenning_recall_log_failures_total)
        self.failures = 0
        self.observers: list[Observer] = []
        self._jobs: queue.Queue[Job | None] = queue.Queue(maxsize=max(capacity, 1))
        self._state = threading.Condition()
        self._accepted = 0  # jobs queued so far ...
        # ... and how many of them the thread has finished (FIFO, so the first ones)
        self._written = 0
        self._thread: threading.Thread | None = None
        self._closed = False

    def submit(self, job: Job) -> bool:
        """Queue ``job``; True when queued, False when it was written here
        (full, closed or no room)."""
        with self._state:
            if self.capacity > 0 and not self._closed:
                self._start()
                try:
                    self._jobs.put_nowait(job)
                except queue.Full:
                    pass
                else:
                    self._accepted += 1
                    return True
        self._run(job)
        return False

    def pending(self) -> int:
        """Jobs accepted and not written yet."""
        with self._state:
            return self._accepted - self._written

    def flush(self) -> None:
        """Wait until every job accepted before this call has been written (or given up)."""
        with self._state:
            target = self._accepted
            self._state.wait_for(lambda: self._written >= target)

    def close(self) -> None:
        """Write what is queued, then stop the thread. Idempotent; later jobs
        are written in their caller."""
        with self._state:
            if self._closed:
                return
            self._closed = True
            thread = self._thread
        if thread is not None:
            self._jobs.put(None)
            thread.join()

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
            self._thread.start()
            atexit.register(_close, weakref.ref(self))  # a process that never closes still drains

    def _loop(self) -> None:
        while (job := self._jobs.get()) is not None:
            self._run(job)
            with self._state:
                self._written += 1
                self._state.notify_all()

    def _run(self, job: Job) -> None:
        """The job, tried twice; the one place a writer catches everything (a failed write must not
        raise into an unrelated later call, nor kill the thread that serves every other job)."""
        for attempt in (1, 2):
            try:
                job()
            except Exception:  # logged and counted, see above
                if attempt == 1:
                    log.warning(
                        "%s: a background write failed; trying once more", self.name, exc_info=True
                    )
                    continue
                with self._state:
                    self.failures += 1
                log.error(
                    "%s: a background write failed twice and is given up", self.name, exc_info=True
                )
                for observe in self.observers:
                    observe()
            return


def _close(ref: weakref.ref[Writer]) -> None:
    writer = ref()
    if writer is not None:
        writer.close()


class Commands:
    """A job: the commands ``build()`` makes (on the writer's thread), sent in one round trip (no
    transaction). Run again, it sends only those whose reply was an error (a counter touch is not
    idempotent: resending one that landed would count twice); when the round trip itself failed, it
    cannot know which landed and sends them all."""

    def __init__(
        self, client: valkey.Valkey, build: Callable[[], Sequence[tuple[Any, ...]]]
    ) -> None:
        self.client = client
        self.build: Callable[[], Sequence[tuple[Any, ...]]] | None = build
        self.left: list[tuple[Any, ...]] = []

    def __call__(self) -> None:
        if self.build is not None:
            self.left, self.build = list(self.build()), None
        pipe = self.client.pipeline(transaction=False)
        for command in self.left:
            pipe.execute_command(*command)  # type: ignore[no-untyped-call]
        replies = call(pipe.execute, raise_on_error=False)
        failed = [
            (c, r) for c, r in zip(self.left, replies, strict=True) if isinstance(r, Exception)
        ]
        self.left = [c for c, _ in failed]
        if failed:
            raise StoreError(
                f"{len(failed)} command(s) failed, the first {failed[0][0][0]}: {failed[0][1]}"
            )
