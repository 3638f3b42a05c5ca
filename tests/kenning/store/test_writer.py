"""The background writer (kenning.store.writer) on its own: FIFO, flush, a full queue writes in
the caller, a failed job is retried once then counted, close drains. Jobs are plain functions
that block on events (no clock, no timing)."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from kenning.store.writer import Writer

WAIT = 30.0  # seconds an event may take before the test fails (never reached when the writer works)


@pytest.fixture
def writer() -> Iterator[Writer]:
    made = Writer("test-writer", capacity=1)
    yield made
    made.close()


class Gate:
    """A job that says when it started and waits until it is let through."""

    def __init__(self) -> None:
        self.entered, self.open = threading.Event(), threading.Event()

    def __call__(self) -> None:
        self.entered.set()
        assert self.open.wait(WAIT)


def test_jobs_run_in_order_on_the_thread_and_flush_waits_for_them(writer: Writer) -> None:
    done: list[tuple[int, str]] = []
    gate = Gate()
    assert writer.submit(gate)
    assert gate.entered.wait(WAIT)
    assert writer.submit(lambda: done.append((1, threading.current_thread().name)))
    assert writer.pending() == 2  # the gate runs, the second waits behind it
    threading.Thread(target=gate.open.set).start()
    writer.flush()
    assert writer.pending() == 0
    assert done == [(1, "test-writer")]


def test_a_full_queue_writes_in_the_caller_never_drops(writer: Writer) -> None:
    gate = Gate()
    ran: list[str] = []
    assert writer.submit(gate)
    assert gate.entered.wait(WAIT)  # the thread is busy with the gate ...
    assert writer.submit(lambda: ran.append("queued"))  # ... one job fills the queue of one ...
    # ... so this one ran here, at once
    assert not writer.submit(lambda: ran.append("in the caller"))
    assert ran == ["in the caller"]
    gate.open.set()
    writer.flush()
    assert ran == ["in the caller", "queued"]


def test_a_failed_job_is_retried_once_and_a_second_failure_is_counted() -> None:
    writer = Writer("test-writer", capacity=8)
    attempts: list[str] = []
    observed: list[int] = []
    writer.observers.append(lambda: observed.append(writer.failures))

    def flaky() -> None:
        attempts.append("flaky")
        if len(attempts) == 1:
            raise ConnectionError("first attempt")

    def broken() -> None:
        attempts.append("broken")
        raise ConnectionError("every attempt")

    assert writer.submit(flaky)
    assert writer.submit(broken)
    writer.flush()  # never raises either
    assert attempts == ["flaky", "flaky", "broken", "broken"]
    assert (writer.failures, observed) == (1, [1])  # the retried success is no failure
    after: list[str] = []
    assert writer.submit(lambda: after.append("ok"))  # the thread survived the failure
    writer.close()
    assert after == ["ok"]


def test_close_drains_and_later_jobs_run_in_the_caller() -> None:
    writer = Writer("test-writer", capacity=8)
    gate, ran = Gate(), []
    assert writer.submit(gate)
    assert writer.submit(lambda: ran.append("queued"))
    assert gate.entered.wait(WAIT)
    threading.Thread(target=gate.open.set).start()
    writer.close()
    assert ran == ["queued"]
    assert not writer.submit(lambda: ran.append("after close"))
    assert ran == ["queued", "after close"]
    writer.close()  # idempotent


def test_no_room_writes_every_job_in_its_caller() -> None:
    writer = Writer("test-writer", capacity=0)
    ran: list[str] = []
    assert not writer.submit(lambda: ran.append(threading.current_thread().name))
    assert ran == [threading.current_thread().name]
    writer.flush()
    writer.close()
