"""Every failure shape of the model, through each extra's front door (issue 35, defect 1): a body
that is not JSON, a body cut off half-way, a JSON body of the wrong shape, an answer that is not
the JSON asked for, and a slow reply. Each is the documented degraded state ("unavailable", with
its reason) and counted as a metric; none is an error of the caller's request.

Doors: recall with query expansion over MCP, a summary feed through the worker's feed job, and
the enrichment queue through `kenning queue run` (a subprocess of the real CLI)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import valkey
from prometheus_client import CollectorRegistry

from feed_worker.feeds import ingest
from feed_worker.metrics import FeedMetrics
from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.knowledge.feeds.config import Feed
from kenning.memory.memories import Draft
from kenning.runtime.embedding import Embedder
from tests.anthropic_fake import (
    FakeAnthropic,
    Reply,
    answer,
    message,
    non_json,
    slow,
    truncated,
    with_key,
    wrong_shape,
)
from tests.feeds_server import FeedServer
from tests.mcp_server.conftest import mcp_settings, ok, start_harness

ALERTS = "Grafana alerts for disk usage page the on-call engineer above 85 percent."


# (reply, the reason's start, the llm metric's outcome)
SHAPES: list[tuple[str, Reply, str, str]] = [
    ("non_json", non_json(), "failed: the LLM's reply was not JSON", "malformed"),
    ("truncated", truncated({"queries": ["x"]}), "failed: the LLM did not answer", "failed"),
    ("wrong_shape", wrong_shape(), "failed: the LLM's reply was not a message", "malformed"),
    ("prose", message("Sure! Here you go."), "failed: the model's answer held no JSON", "invalid"),
    (
        "slow",
        slow(answer({"queries": ["disk alert"]}), 2.0),
        "failed: the LLM did not answer within 0.5 s",
        "failed",
    ),
]


@pytest.mark.parametrize(("name", "reply", "reason", "outcome"), SHAPES, ids=[s[0] for s in SHAPES])
async def test_recall_with_expansion_over_mcp_degrades_on_every_shape(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    fake: FakeAnthropic,
    name: str,
    reply: Reply,
    reason: str,
    outcome: str,
) -> None:
    own = mcp_settings(settings)
    keyed = with_key(
        own,
        fake,
        mcp_port=own.mcp_port,
        query_expansion=True,
        query_expansion_timeout_seconds=0.5,
        llm_extract_facts=False,
        llm_contradiction_verdicts=False,
    )
    engine = Engine.open(keyed, client, embedder, clock=clock)
    engine.memories.remember(Draft(ALERTS, project="ops"), actor="agent")
    harness = start_harness(engine, keyed)
    try:
        fake.then(reply)
        async with harness.client("write") as mcp:
            found = await ok(mcp, "recall", {"query": "disk usage alerts", "projects": ["ops"]})
    finally:
        harness.service.stop()
    assert found["results"][0]["content"] == ALERTS  # the query alone still answers
    expansion = found["diagnostics"]["expansion"]
    assert expansion["used"] is False
    assert expansion["reason"].startswith(reason), expansion
    assert len(fake.requests) == 1  # it was asked: the fallback is the failure's, not "no key"
    labels = {"purpose": "query_expansion", "outcome": outcome}
    assert harness.metrics.get_sample_value("kenning_llm_calls_total", labels) == 1.0


FEED = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Ops</title><link>https://ops.example/</link>
<description>x</description>
<item><title>Valkey 9.1 released</title><link>https://ops.example/valkey-9-1</link>
<guid>ops-1</guid><pubDate>Tue, 01 Dec 2026 10:00:00 GMT</pubDate>
<description>Valkey 9.1 adds per-field hash expiration and dual-channel replication.</description>
</item></channel></rss>"""


@pytest.mark.parametrize(
    ("name", "reply", "reason", "outcome"),
    [s for s in SHAPES if s[0] != "slow"]
    + [("slow", slow(answer({"summary": "x"}), 2.0), "failed: the LLM did not answer", "failed")],
    ids=[s[0] for s in SHAPES],
)
def test_a_summary_feed_through_the_worker_job_stores_the_excerpt_on_every_shape(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    fake: FakeAnthropic,
    feed_server: FeedServer,
    tmp_path: Path,
    name: str,
    reply: Reply,
    reason: str,
    outcome: str,
) -> None:
    engine = Engine.open(
        with_key(
            settings,
            fake,
            feed_allow=feed_server.allow,
            feeds_file=tmp_path / "feeds.yml",
            llm_extract_facts=False,
            llm_contradiction_verdicts=False,
            llm_max_retries=0,
            llm_timeout_seconds=0.5,
        ),
        client,
        embedder,
        clock=clock,
    )
    seen: list[tuple[str, str, int]] = []
    engine.llm.observers.append(lambda *event: seen.append(event))
    feed_server.serve(f"/{name}.xml", FEED)
    feed = Feed(name=f"ops-{name}", url=feed_server.url(f"/{name}.xml"), mode="summary")
    fake.then(reply)
    metrics = FeedMetrics(CollectorRegistry())
    summary = ingest(engine, feed, metrics)  # the worker's job: it must not raise
    assert (summary["outcome"], summary["new"]) == ("fetched", 1)
    assert summary["summaries"] == {"failed": 1}
    (key,) = _stored_keys(engine, feed.name)
    memory = engine.memories.get(key)
    assert memory.metadata["stored_as"] == "excerpt"
    assert memory.metadata["summary_state"].startswith(reason), memory.metadata
    assert "dual-channel replication" in memory.content
    assert seen == [("feed_summary", outcome, 0 if outcome != "invalid" else 50)]
    assert metrics.summaries.labels(feed.name, "failed")._value.get() == 1.0


def _stored_keys(engine: Engine, feed: str) -> tuple[str, ...]:
    from kenning.memory.listing import Listing

    page = engine.memories.list(Listing(namespaces=["knowledge"], kinds=["article"], limit=50))
    return tuple(m.key for m in page.items if m.metadata.get("feed") == feed)


async def test_a_slow_model_does_not_slow_remember_over_mcp(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    fake: FakeAnthropic,
) -> None:
    """Issue 35, defect 5, through the door an agent uses: the contradicting remember answers
    before the model server has even received the verdict's request (the reply is held until
    after); the record is pending, and the verdict lands when the queue runs."""
    own = mcp_settings(settings)
    keyed = with_key(own, fake, llm_extract_facts=False, mcp_port=own.mcp_port)
    engine = Engine.open(keyed, client, embedder, clock=clock)
    held = answer({"verdict": "contradiction", "reason": "opposite advice"})
    held.hold = threading.Event()
    fake.then(held)
    harness = start_harness(engine, keyed)
    try:
        async with harness.client("write") as mcp:
            await ok(mcp, "remember", {"content": "Do not use pickle", "project": "shop"})
            second = await ok(mcp, "remember", {"content": "Use pickle.", "project": "shop"})
    finally:
        harness.service.stop()
    assert second["status"] == "stored"
    assert fake.requests == []  # remember answered; the model was not asked
    (record,), _ = engine.contradictions.listing()
    assert record.second_tier == "pending"
    held.hold.set()
    assert engine.enrichment.drain("w1").done == 1
    (record,), _ = engine.contradictions.listing()
    assert (record.second_tier, record.second_tier_note) == ("contradiction", "opposite advice")
    assert len(fake.requests) == 1
