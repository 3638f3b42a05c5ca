"""The enrichment queue: facts become memories linked to their source, nothing is stored twice,
poison jobs are parked with their error, and a worker killed mid-job leaves the
job to be completed once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

import valkey

from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.listing import Listing
from kenning.memory.memories import Draft
from kenning.runtime.embedding import Embedder
from tests.anthropic_fake import FakeAnthropic, answer, message, with_key

SOURCE = (
    "Release 4.2 of the billing service moved to Postgres 16; the nightly export now runs at 02:30 "
    "UTC and is owned by Priya."
)
FACTS = {
    "facts": [
        "The billing service runs on Postgres 16.",
        "The nightly billing export runs at 02:30 UTC.",
    ]
}


def open_engine(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    fake: FakeAnthropic,
    **overrides: Any,
) -> Engine:
    return Engine.open(
        with_key(settings, fake, llm_contradiction_verdicts=False, **overrides),
        client,
        embedder,
        clock=clock,
    )


def facts_of(engine: Engine, source: str) -> list[Any]:
    page = engine.memories.list(Listing(namespaces=["knowledge"], limit=50))
    return [m for m in page.items if m.source_key == source]


def test_facts_become_linked_memories_and_a_rerun_stores_nothing_twice(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    fake: FakeAnthropic,
) -> None:
    engine = open_engine(settings, client, embedder, clock, fake)
    stored = engine.memories.remember(
        Draft(SOURCE, namespace="episodic", project="billing", event_date="2026-05-04"),
        actor="agent",
    )
    assert engine.enrichment.status().waiting == 1
    fake.then(answer(FACTS), answer(FACTS))
    report = engine.enrichment.drain("w1")
    assert (report.claimed, report.done, report.facts_stored) == (1, 1, 2)
    facts = facts_of(engine, stored.key)
    assert sorted(f.content for f in facts) == sorted(FACTS["facts"])
    source = engine.memories.get(stored.key)
    for fact in facts:
        assert fact.kind == "fact"
        assert fact.project == "billing"
        assert fact.event_date == source.event_date
        assert fact.metadata["enriched_from"] == stored.key
        assert fact.actor == "llm:enrichment"
    engine.enrichment.queue.push("extract_facts", {"key": stored.key})  # the same job again
    again = engine.enrichment.drain("w1")
    assert (again.facts_stored, again.facts_duplicate) == (0, 2)
    assert len(facts_of(engine, stored.key)) == 2


def test_without_a_key_nothing_is_queued(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    engine: Engine,
    fake: FakeAnthropic,
) -> None:
    engine.memories.remember(Draft(SOURCE, namespace="episodic", project="billing"), actor="agent")
    status = engine.enrichment.status()
    assert status.waiting == 0
    assert status.llm.startswith("off")
    # positive control: with a key it queues
    keyed = open_engine(settings, client, embedder, clock, fake)
    keyed.memories.remember(
        Draft(SOURCE + " Second copy.", namespace="episodic", project="other"), actor="agent"
    )
    assert keyed.enrichment.status().waiting == 1


def test_a_poison_job_is_parked_with_its_error(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    fake: FakeAnthropic,
) -> None:
    engine = open_engine(
        settings,
        client,
        embedder,
        clock,
        fake,
        enrichment_visibility_seconds=0.001,
        enrichment_max_attempts=2,
    )
    engine.memories.remember(Draft(SOURCE, namespace="episodic", project="billing"), actor="agent")
    fake.then(message("no json here"), message("still none"))
    first = engine.enrichment.drain("w1")
    assert (first.retried, first.parked) == (1, 0)
    time.sleep(0.01)  # past the visibility timeout: the job is claimable again
    second = engine.enrichment.drain("w2")
    assert (second.claimed, second.parked) == (1, 1)
    status = engine.enrichment.status()
    assert (status.waiting, status.in_flight, status.parked) == (0, 0, 1)
    assert "held no JSON" in status.recent_parked[0]["error"]
    assert status.recent_parked[0]["attempts"] == "2"


def test_a_worker_killed_mid_job_leaves_it_to_complete_once(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    fake: FakeAnthropic,
) -> None:
    engine = open_engine(settings, client, embedder, clock, fake, enrichment_visibility_seconds=1.0)
    stored = engine.memories.remember(
        Draft(SOURCE, namespace="episodic", project="billing"), actor="agent"
    )
    held = answer(FACTS)
    held.hold = threading_event()
    fake.then(held, answer(FACTS))
    env = {k: v for k, v in os.environ.items() if not k.startswith("KENNING_")}
    env.update(
        {
            "KENNING_DATA_DIR": str(settings.data_dir),
            "KENNING_VALKEY_PORT": str(settings.valkey_port),
            "KENNING_KEY_PREFIX": settings.key_prefix,
            "KENNING_ANTHROPIC_API_KEY": "sk-test-not-real",
            "KENNING_ANTHROPIC_BASE_URL": fake.url,
            "KENNING_LOG_LEVEL": "WARNING",
        }
    )
    worker = subprocess.Popen(
        [sys.executable, "-m", "kenning_cli", "queue", "run"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        assert fake.received.wait(180), "the worker never asked the LLM"
        assert engine.enrichment.status().in_flight == 1  # claimed, not finished
        worker.send_signal(signal.SIGKILL)
        worker.wait(30)
    finally:
        held.hold.set()
        if worker.poll() is None:
            worker.kill()
    assert facts_of(engine, stored.key) == []  # positive control for "once": nothing stored yet
    time.sleep(1.2)  # the visibility timeout passes
    report = engine.enrichment.drain("restarted")
    assert (report.claimed, report.done, report.facts_stored) == (1, 1, 2)
    assert len(facts_of(engine, stored.key)) == 2
    status = engine.enrichment.status()
    assert (status.waiting, status.in_flight, status.parked) == (0, 0, 0)


def threading_event() -> Any:
    import threading

    return threading.Event()
