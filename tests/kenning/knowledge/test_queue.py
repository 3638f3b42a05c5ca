"""The enrichment queue when its input misbehaves (issue 35, defects 1 and 3): every failure shape
of the model through `kenning queue run` is accounted for (nothing escapes, nothing stays in flight
outside the attempts); an outage or an exhausted budget delays a job on a schedule with a
ceiling instead of parking it; a parked job is listed with its reason and a person requeues or
drops it (`kenning queue parked|requeue|drop`). Real Valkey, model and CLI entry point; the model
server and the clock are the fakes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import valkey

from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.knowledge.enrichment import retry_wait
from kenning.memory.memories import Draft
from kenning.runtime.embedding import Embedder
from kenning_cli.main import load_commands, main
from tests.anthropic_fake import (
    QUIET,
    FakeAnthropic,
    answer,
    error,
    keyed_engine,
    message,
    non_json,
    slow,
    truncated,
    wrong_shape,
)

load_commands()

SOURCES = [
    f"Release 4.{n} of the billing service moved the nightly export to 0{n}:30 UTC, owned by "
    f"team {name}."
    for n, name in enumerate(("Kestrel", "Heron", "Osprey", "Plover"))
]
FACTS = {"facts": ["The billing export runs at night."]}


@pytest.fixture
def cli_env(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, settings: Settings, fake: FakeAnthropic
) -> None:
    monkeypatch.chdir(tmp_path)  # no developer .env leaks in
    for name, value in (
        ("DATA_DIR", settings.data_dir),
        ("VALKEY_PORT", settings.valkey_port),
        ("KEY_PREFIX", settings.key_prefix),
        ("ANTHROPIC_API_KEY", "sk-test-not-real"),
        ("ANTHROPIC_BASE_URL", fake.url),
        ("LLM_MAX_RETRIES", 0),
        ("LLM_TIMEOUT_SECONDS", 0.5),
        ("LLM_CONTRADICTION_VERDICTS", "false"),
        ("ENRICHMENT_MAX_ATTEMPTS", 1),
        ("LOG_LEVEL", "WARNING"),
    ):
        monkeypatch.setenv(f"KENNING_{name}", str(value))


def cli(capsys: pytest.CaptureFixture[str], *args: str, code: int = 0) -> Any:
    capsys.readouterr()
    assert main(["queue", *args]) == code
    out = capsys.readouterr().out
    return json.loads(out) if args[0] in ("status", "run", "parked") else out


def test_every_failure_shape_through_queue_run_is_accounted_for(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    fake: FakeAnthropic,
    cli_env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    engine = keyed_engine(settings, client, embedder, clock, fake, **QUIET)
    for text in SOURCES:
        engine.memories.remember(
            Draft(text, namespace="episodic", project="billing"), actor="agent"
        )
    assert engine.enrichment.status().waiting == 4
    fake.then(non_json(), wrong_shape(), truncated(FACTS), slow(answer(FACTS), 2.0))
    report = cli(capsys, "run")
    assert (report["claimed"], report["done"]) == (4, 0)
    # the wrong answers count an attempt (parked at the first: max attempts 1) ...
    assert report["parked"] == 2
    # ... the LLM that did not answer (cut off, too slow) delays the job instead
    assert report["delayed"] == 2
    assert len(report["errors"]) == 4
    status = cli(capsys, "status")
    assert (status["waiting"], status["in_flight"], status["delayed"], status["parked"]) == (
        0,
        0,
        2,
        2,
    )
    assert status["spent_today"]["failures"] == 4  # the metric: each failure counted
    errors = sorted(job["error"] for job in cli(capsys, "parked"))
    assert "was not JSON" in errors[0] or "was not JSON" in errors[1]
    assert any("was not a message" in e for e in errors)


def test_an_outage_delays_on_a_schedule_with_a_ceiling_and_never_parks(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    fake: FakeAnthropic,
) -> None:
    engine = keyed_engine(
        settings,
        client,
        embedder,
        clock,
        fake,
        **QUIET,
        enrichment_max_attempts=1,
        enrichment_retry_seconds=60.0,
        enrichment_retry_max_seconds=200.0,
    )
    engine.memories.remember(Draft(SOURCES[0], namespace="episodic"), actor="agent")
    fake.then(error(503), error(500), error(429), error(500))
    waits = []
    for _ in range(4):
        before = clock.now()
        report = engine.enrichment.drain("w1")
        assert (report.claimed, report.delayed, report.parked) == (1, 1, 0)
        status = engine.enrichment.status()
        assert (status.delayed, status.parked, status.in_flight) == (1, 0, 0)
        assert status.next_due is not None
        waits.append(status.next_due - before)
        assert engine.enrichment.drain("w1").claimed == 0  # not due yet
        clock.advance(waits[-1])
    assert waits == [60.0, 120.0, 200.0, 200.0]  # doubling, up to the ceiling
    fake.then(answer(FACTS))
    done = engine.enrichment.drain("w1")  # the model is back: the job completes
    assert (done.claimed, done.done, done.facts_stored) == (1, 1, 1)
    assert engine.enrichment.status().delayed == 0
    assert retry_wait(0, 60.0, 200.0) == 60.0


def test_an_exhausted_budget_delays_until_it_returns(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    fake: FakeAnthropic,
) -> None:
    engine = keyed_engine(
        settings,
        client,
        embedder,
        clock,
        fake,
        **QUIET,
        enrichment_max_attempts=1,
        llm_daily_token_cap=40,
        enrichment_retry_max_seconds=7 * 86_400.0,
    )
    for text in SOURCES[:2]:
        engine.memories.remember(Draft(text, namespace="episodic"), actor="agent")
    fake.then(answer(FACTS, input_tokens=40, output_tokens=10), answer(FACTS))
    first = engine.enrichment.drain("w1")
    # positive control: the first went out; then the budget is spent and nothing more is sent
    assert (first.done, first.delayed, first.parked, len(fake.requests)) == (1, 1, 0, 1)
    status = engine.enrichment.status()
    assert status.next_due is not None
    assert status.next_due == (clock.now() // 86_400 + 1) * 86_400  # the next UTC day
    clock.advance(status.next_due - clock.now())
    again = engine.enrichment.drain("w1")
    assert (again.claimed, again.done, len(fake.requests)) == (1, 1, 2)


def test_a_parked_job_is_listed_with_its_reason_and_requeued_or_dropped(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    fake: FakeAnthropic,
    cli_env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    engine = keyed_engine(
        settings, client, embedder, clock, fake, **QUIET, enrichment_max_attempts=1
    )
    for text in SOURCES[:2]:
        engine.memories.remember(Draft(text, namespace="episodic"), actor="agent")
    fake.then(message("no json"), message("none either"))
    assert engine.enrichment.drain("w1").parked == 2
    parked = cli(capsys, "parked")
    assert len(parked) == 2
    assert all("held no JSON" in job["error"] for job in parked)
    assert cli(capsys, "requeue", code=2).startswith("kenning queue requeue: give")
    out = cli(capsys, "requeue", parked[0]["id"])
    assert out.startswith(f"requeued {parked[0]['id']} as ")
    assert cli(capsys, "drop", parked[1]["id"]).strip() == f"dropped {parked[1]['id']}"
    assert "no parked job" in cli(capsys, "drop", parked[1]["id"], code=1)
    status = engine.enrichment.status()
    assert (status.waiting, status.parked) == (1, 0)
    fake.then(answer(FACTS))
    assert engine.enrichment.drain("w1").done == 1  # the requeued job runs with fresh attempts
    actions = [e.action for e in engine.history.audit_log(limit=20).events]
    assert {"queue_requeue", "queue_drop"} <= set(actions)
