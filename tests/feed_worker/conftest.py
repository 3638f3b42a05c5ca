"""Worker test helpers: a recorder that tests wait on (an event, never a sleep-then-assert)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest

from feed_worker.worker import Worker
from kenning.ops.jobs import JobRun
from tests.feeds_server import feed_server  # noqa: F401 (a fixture: the local feed server)

WAIT = 60.0  # generous: the box is shared; waits end as soon as the condition holds
T = TypeVar("T")


class Recorder:
    """Collects every run a worker reports; ``wait_until`` blocks until a
    predicate over them holds."""

    def __init__(self) -> None:
        self.runs: list[JobRun] = []
        self._changed = threading.Condition()

    def __call__(self, run: JobRun) -> None:
        with self._changed:
            self.runs.append(run)
            self._changed.notify_all()

    def wait_until(
        self, predicate: Callable[[list[JobRun]], bool], timeout: float = WAIT
    ) -> list[JobRun]:
        with self._changed:
            if not self._changed.wait_for(lambda: predicate(self.runs), timeout=timeout):
                raise AssertionError(f"condition never held; runs: {self.runs}")
            return list(self.runs)

    def of(self, job: str, status: str | None = None) -> list[JobRun]:
        with self._changed:
            return [r for r in self.runs if r.job == job and (status is None or r.status == status)]


def eventually(attempt: Callable[[], T], done: Callable[[T], bool], timeout: float = WAIT) -> T:
    """Repeat ``attempt`` until ``done(result)``; for conditions outside the process (a lease
    expiring in Valkey, a child process writing), where there is nothing to wait on
    but the condition itself."""
    deadline = time.monotonic() + timeout
    while True:
        result = attempt()
        if done(result):
            return result
        if time.monotonic() > deadline:
            raise AssertionError(f"condition never held; last result: {result!r}")
        time.sleep(0.1)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def stopper() -> Iterator[list[Worker]]:
    """Workers appended here are stopped after the test, even when it fails."""
    workers: list[Worker] = []
    yield workers
    for worker in workers:
        worker.stop()
