"""/metrics (parseable Prometheus text on the server's own registry), /healthz, and a Valkey outage
in the middle of a session reported as an outage, never as "no memories"."""

from __future__ import annotations

import os
import signal
from typing import Any

import httpx
from prometheus_client import REGISTRY, CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from kenning.core.clock import ManualClock
from kenning.engine import Engine
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder, ObservedEmbedder
from kenning.store import connect
from mcp_server.metrics import Metrics
from tests.mcp_server.conftest import McpHarness, mcp_settings, ok, refused, start_harness


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


async def test_metrics_count_calls_errors_and_latency_per_tool(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        await ok(client, "remember", {"content": "Metrics are exposed at /metrics"})
        await refused(client, "recall", {"query": "x", "top_k": 0})
    async with mcp.client("read") as reader:
        await refused(reader, "remember", {"content": "refused by scope"})
        for made_up in ("no_such_tool_1", "no_such_tool_2"):  # callers cannot mint label values
            assert "not_found" in await refused(reader, made_up)
    async with httpx.AsyncClient(base_url=mcp.base) as http:
        response = await http.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    found = samples(response.text)
    assert found[("kenning_mcp_tool_calls_total", (("outcome", "ok"), ("tool", "remember")))] == 1.0
    assert (
        found[("kenning_mcp_tool_calls_total", (("outcome", "error"), ("tool", "recall")))] == 1.0
    )
    assert (
        found[
            ("kenning_mcp_tool_errors_total", (("code", "invalid_arguments"), ("tool", "recall")))
        ]
        == 1.0
    )
    assert (
        found[
            ("kenning_mcp_tool_errors_total", (("code", "permission_denied"), ("tool", "remember")))
        ]
        == 1.0
    )
    assert found[("kenning_mcp_tool_latency_seconds_count", (("tool", "remember"),))] == 2.0
    assert (
        found[("kenning_mcp_tool_calls_total", (("outcome", "error"), ("tool", "unknown")))] == 2.0
    )
    assert (
        found[("kenning_mcp_tool_errors_total", (("code", "not_found"), ("tool", "unknown")))]
        == 2.0
    )
    assert "no_such_tool" not in response.text
    assert ("kenning_valkey_errors_total", ()) in found
    assert ("kenning_embedding_latency_seconds_count", ()) in found
    assert (
        REGISTRY.get_sample_value(
            "kenning_mcp_tool_calls_total", {"tool": "remember", "outcome": "ok"}
        )
        is None
    )  # the process-wide default registry is untouched


async def test_a_recall_log_write_given_up_is_counted(mcp: McpHarness) -> None:
    async with mcp.client("write") as client, httpx.AsyncClient(base_url=mcp.base) as http:
        await ok(client, "remember", {"content": "Metrics are exposed at /metrics"})
        assert (await ok(client, "recall", {"query": "where are the metrics?"}))["results"]
        mcp.engine.store.recall_writes.flush()
        failures = ("kenning_recall_log_failures_total", ())
        # written: nothing failed
        assert samples((await http.get("/metrics")).text)[failures] == 0.0
        # every XADD fails
        mcp.engine.store.client.set(mcp.engine.store.recall_log.key, "not a stream")
        # the reply is whole
        assert (await ok(client, "recall", {"query": "where are the metrics?"}))["results"]
        mcp.engine.store.recall_writes.flush()
        assert samples((await http.get("/metrics")).text)[failures] == 1.0


async def test_healthz_reports_every_check(mcp: McpHarness) -> None:
    async with httpx.AsyncClient(base_url=mcp.base) as http:
        response = await http.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert {name for name, check in body["checks"].items() if check["ok"]} == {
        "valkey",
        "search_module",
        "indexes",
        "model",
    }


async def test_valkey_outage_mid_session_is_reported_as_an_outage(
    doomed_valkey: EmbeddedValkey, embedder: Embedder
) -> None:
    settings = doomed_valkey.settings
    engine = Engine.open(settings, connect(settings), embedder, clock=ManualClock(1_790_000_000.0))
    harness = start_harness(engine, mcp_settings(settings))
    try:
        async with harness.client("write") as client:
            stored = await ok(client, "remember", {"content": "Valkey outages must be loud"})
            before = await ok(client, "recall", {"query": "are outages loud?"})
            assert before["results"][0]["key"] == stored["key"]  # positive control
            doomed_valkey.stop()
            during: tuple[tuple[str, dict[str, Any]], ...] = (
                ("recall", {"query": "are outages loud?"}),
                ("recall_index", {"query": "are outages loud?"}),
                ("recall_detail", {"keys": [stored["key"]]}),
                ("explain_memory", {"key": stored["key"]}),
                ("remember", {"content": "written during the outage"}),
                ("remember_document", {"text": "A document written during the outage."}),
                ("memory_audit", {}),
                ("list_projects", {}),
            )
            for tool, arguments in during:
                message = await refused(client, tool, arguments)
                assert message.startswith("backend_unavailable: memory could NOT be checked"), (
                    message
                )
                assert "request id" in message
                assert str(settings.valkey_port) not in message  # internals stay in the server log
                assert "no memory is relevant" not in message
        async with httpx.AsyncClient(base_url=harness.base) as http:
            health = await http.get("/healthz")
            metrics = samples((await http.get("/metrics")).text)
    finally:
        harness.service.stop()
    assert health.status_code == 503
    assert health.json()["checks"] == {
        "valkey": {"ok": False},
        "search_module": {"ok": False},
        "indexes": {"ok": False},
        "model": {"ok": True},
    }
    assert str(settings.valkey_port) not in health.text
    assert metrics[("kenning_valkey_errors_total", ())] == len(during)


def test_observed_embedder_records_embedding_latency(embedder: Embedder) -> None:
    registry = CollectorRegistry()
    timed = ObservedEmbedder(embedder, Metrics(registry).embedding_latency.observe)
    assert len(timed.embed("one text")) == embedder.dimension
    assert len(timed.embed_many(["two", "texts"])) == 2
    assert timed.model_name == embedder.model_name
    assert registry.get_sample_value("kenning_embedding_latency_seconds_count") == 2.0


async def test_healthz_answers_503_within_its_deadline_when_valkey_hangs(
    doomed_valkey: EmbeddedValkey, embedder: Embedder
) -> None:
    settings = doomed_valkey.settings
    engine = Engine.open(settings, connect(settings), embedder, clock=ManualClock(1_790_000_000.0))
    harness = start_harness(engine, mcp_settings(settings, health_timeout_seconds=0.5))
    assert doomed_valkey.process is not None
    pid = doomed_valkey.process.pid
    try:
        async with httpx.AsyncClient(base_url=harness.base, timeout=60) as http:
            healthy = await http.get("/healthz")
            os.kill(pid, signal.SIGSTOP)  # hung, not gone: connections stay open, nothing answers
            try:
                hung = await http.get("/healthz")
                again = await http.get("/healthz")  # while the first one's check still waits
            finally:
                os.kill(pid, signal.SIGCONT)
    finally:
        harness.service.stop()
    assert healthy.status_code == 200  # the positive control
    assert (hung.status_code, again.status_code) == (503, 503)
    assert hung.json() == {
        "ok": False,
        "reason": "the health checks did not finish within 0.5s (is Valkey hung?)",
    }
