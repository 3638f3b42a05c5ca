"""A shard down on a cluster without replicas (kenning/store/shards.py, docs/cluster.md "Faults").

Positive control first: with every shard up, a recall finds a memory on each shard, through the
engine, the MCP tool and the dashboard's search page. Then one primary is killed: a read by key of
a memory on a live shard still answers (the nodes run with ``cluster-require-full-coverage no``),
one on the dead shard fails naming its node, and a recall -- through the engine, a real MCP client
and the dashboard's search page in Chromium -- fails with ``backend_unavailable`` naming the dead
node and its slots, never "no memories"."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest
from playwright.async_api import Browser

from kenning.core.errors import BackendUnavailable
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.cluster import LocalCluster
from kenning.runtime.embedding import Embedder
from kenning.store import connect
from kenning.store.cluster_admin import ranges
from kenning.store.slots import slot
from tests.conftest import cluster_module, make_settings
from tests.mcp_server.conftest import mcp_settings, ok, refused, start_harness
from tests.web_ui.conftest import Dashboard, make_accounts, web_settings
from tests.web_ui.test_browser import signed_in
from web_ui.service import WebService

pytestmark = pytest.mark.cluster

NOTES = (
    "The billing export runs at 02:00 and writes CSV files to the finance bucket",
    "Thumbnails are resized by a worker that reads from the uploads queue",
    "The mailer retries a bounced message three times, an hour apart",
    "Search reindexing is triggered by the nightly catalogue import",
    "The ledger service refuses writes while the month is being closed",
    "Session cookies expire after twelve hours of inactivity",
    "The staging database is restored from production every Sunday",
    "Feature flags are read from the config service at process start",
    "The report builder caches rendered PDFs for a week",
    "Webhook deliveries are signed with the tenant's own secret",
    "The sync job skips archived projects to save API quota",
    "Our load balancer drains a node for thirty seconds before a deploy",
)


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[LocalCluster]:
    with LocalCluster(tmp_path, cluster_module(), shards=3, node_timeout_ms=2000) as formed:
        yield formed


def _port_of(cluster: LocalCluster, key: str) -> int:
    """The primary serving ``key`` (the slots are cut in equal ranges when the cluster forms)."""
    at = slot(key)
    shard = next(i for i, (low, high) in enumerate(ranges(cluster.shards)) if low <= at <= high)
    return cluster.ports[shard]


def _spread(engine: Engine, cluster: LocalCluster) -> dict[int, list[tuple[str, str]]]:
    """Every note remembered; (key, words) by the port of the shard holding it."""
    by_port: dict[int, list[tuple[str, str]]] = {p: [] for p in cluster.ports}
    for words in NOTES:
        key = engine.memories.remember(Draft(words, project="spread"), actor="t").key
        by_port[_port_of(cluster, key)].append((key, words))
    return by_port


def _found(engine: Engine, words: str) -> list[str]:
    asked = RecallRequest(words, projects=["spread"], top_k=10, actor="t")
    return [h.memory.key for h in engine.recaller.recall(asked).hits]


async def test_a_shard_down_fails_recall_naming_it_and_reads_by_key_elsewhere_still_answer(
    cluster: LocalCluster, tmp_path: Path, embedder: Embedder, browser: Browser
) -> None:
    settings = make_settings(tmp_path, 6390, key_prefix="sd:", valkey_cluster=cluster.spec)
    engine = Engine.open(settings, connect(settings), embedder)
    harness = start_harness(engine, mcp_settings(settings, valkey_cluster=cluster.spec))
    make_accounts(engine)
    web = Dashboard(engine, web_settings(settings, tmp_path))
    dashboard = WebService(engine, web.settings, web.logins)
    dashboard.start()
    try:
        by_port = _spread(engine, cluster)
        assert all(by_port.values()), by_port  # every shard holds some of the memories
        for port, held in by_port.items():  # positive control: a recall reaches every shard
            key, words = held[0]
            assert key in _found(engine, words), port
        index = engine.ctx.index
        counted = engine.store.index_info(index)  # positive control: FT.INFO asks every shard
        assert counted is not None
        assert counted.num_docs == len(NOTES)
        victim = cluster.ports[1]  # not the accounts' nor the tokens' slot: the doors sign in
        (on_victim, _), (elsewhere, words_elsewhere) = (
            by_port[victim][0],
            by_port[cluster.ports[0]][0],
        )
        page = await signed_in(browser, dashboard.url.rstrip("/"), "viewer")
        searched = f"{dashboard.url.rstrip('/')}/search?{urlencode({'q': words_elsewhere})}"
        await page.goto(searched)
        assert words_elsewhere in await page.content()  # positive control: the page finds it
        async with harness.client("write") as client:
            answered = await ok(client, "recall", {"query": words_elsewhere, "project": "spread"})
            assert elsewhere in [m["key"] for m in answered["results"]]
            cluster.kill(victim)
            for settle in (0.0, 4.0):  # at once, and after the others marked it failed
                time.sleep(settle)
                assert engine.memories.get(elsewhere).key == elsewhere  # a live shard's memory
                with pytest.raises(BackendUnavailable) as unread:
                    engine.memories.get(on_victim)
                assert f"127.0.0.1:{victim}" in unread.value.message
                with pytest.raises(BackendUnavailable) as failed:
                    _found(engine, words_elsewhere)
                assert f"shard 127.0.0.1:{victim} (slots 5461-10922) is down" in str(failed.value)
                # FT.INFO (start-up, doctor, health) is named too: the node it was sent to may
                # time out waiting for the dead one, and that one is not the node to restart
                with pytest.raises(BackendUnavailable) as uncounted:
                    engine.store.index_info(index)
                assert f"shard 127.0.0.1:{victim} (slots 5461-10922) is down" in str(
                    uncounted.value
                )
                said = await refused(
                    client, "recall", {"query": words_elsewhere, "project": "spread"}
                )
                assert said.startswith("backend_unavailable:")
                assert f"shard 127.0.0.1:{victim} (slots 5461-10922) is down" in said
                assert "no memories" not in said.lower()
                shown = await page.goto(searched)
                assert shown is not None
                assert shown.status == 503
                body = await page.inner_text("body")
                assert f"shard 127.0.0.1:{victim} (slots 5461-10922) is down" in body
                assert words_elsewhere not in body
    finally:
        dashboard.stop()
        harness.service.stop()
        engine.close()
