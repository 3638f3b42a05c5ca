"""The telemetry page over HTTP: the usage lists with positive controls (a recall moves a memory
out of "never recalled"), the recall log searched by key and by words with each score's factors,
the charts showing exactly the engine's numbers (memories seeded at known fake-clock times),
recall latency read from a real MCP server's /metrics, the spend panel on the overview, and bad
parameters (an outage: in test_pages.test_an_outage_is_an_error_page_never_an_empty_list)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.testclient import TestClient

from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.store.llm import UsageLedger
from tests.conftest import free_port
from tests.mcp_server.conftest import mcp_settings, ok, start_harness
from tests.web_ui.conftest import Dashboard, contradiction, remember, web_settings

DAY = 86_400
RECT = re.compile(r'<rect [^>]*data-name="([^"]+)" data-label="([^"]+)" data-value="(\d+)"')


def telemetry(client: TestClient, query: str = "") -> dict[str, Any]:
    page = client.get(f"/telemetry?format=json{'&' + query if query else ''}")
    assert page.status_code == 200, page.text
    data: dict[str, Any] = page.json()
    return data


def keys(listing: dict[str, Any]) -> list[str]:
    return [item["key"] for item in listing["items"]]


def recall(engine: Engine, text: str, actor: str = "agent-x") -> list[str]:
    hits = engine.recaller.recall(RecallRequest(text, actor=actor)).hits
    assert hits, text
    return [h.memory.key for h in hits]


def test_telemetry_needs_a_login_and_a_viewer_can_read_it(web: Dashboard) -> None:
    anonymous = web.client(None)
    assert anonymous.get("/telemetry").status_code == 303
    assert anonymous.get("/telemetry?format=json").status_code == 401
    page = web.client("viewer").get("/telemetry")
    assert page.status_code == 200
    assert '<a href="/telemetry" aria-current="page">Telemetry</a>' in page.text
    for heading in ("Most recalled", "Gone cold", "Never recalled", "Why did you mention"):
        assert heading in page.text


def test_a_recall_moves_a_memory_out_of_never_recalled(
    web: Dashboard, engine: Engine, clock: ManualClock
) -> None:
    pg = remember(engine, "The orders service stores its data in PostgreSQL 16")
    other = remember(engine, "Frontend builds use Vite with the legacy plugin for old browsers")
    clock.advance(3 * DAY)
    viewer = web.client("viewer")
    before = telemetry(viewer)["lists"]
    # positive control: both listed, with their age
    assert set(keys(before["never"])) == {pg, other}
    assert {item["age_days"] for item in before["never"]["items"]} == {3}
    assert before["most"]["items"] == []
    assert pg in recall(engine, "which database does the orders service use?")
    live = telemetry(viewer)["lists"]
    assert pg not in keys(live["never"])  # the live counter, before any fold
    assert other in keys(live["never"])
    assert live["never"]["recalled_since_fold"] >= 1
    engine.store.memories.recalls.fold()
    folded = telemetry(viewer)["lists"]
    assert pg not in keys(folded["never"])
    assert folded["never"]["recalled_since_fold"] == 0
    most = {item["key"]: item["recall_count"] for item in folded["most"]["items"]}
    assert most[pg] == 1
    assert other not in most


def test_a_suppressed_memory_is_listed_for_a_person_and_marked(
    web: Dashboard, engine: Engine
) -> None:
    key = remember(engine, "The legacy billing host runs CentOS 7")
    viewer = web.client("viewer")
    listed = {item["key"]: item for item in telemetry(viewer)["lists"]["never"]["items"]}
    assert listed[key]["suppressed_by"] == []  # positive control: listed, not marked
    engine.suppressions.suppress("centos", "retired host", actor="pytest")
    listed = {item["key"]: item for item in telemetry(viewer)["lists"]["never"]["items"]}
    assert listed[key]["suppressed_by"] == ["centos"]
    assert "hidden by suppression: centos" in viewer.get("/telemetry").text


def test_gone_cold_after_the_days_given(web: Dashboard, engine: Engine, clock: ManualClock) -> None:
    key = remember(engine, "Release tags are signed with the team's GPG key")
    assert key in recall(engine, "how are release tags signed?")
    engine.store.memories.recalls.fold()
    viewer = web.client("viewer")
    assert key not in keys(telemetry(viewer)["lists"]["cold"])  # recalled today: not cold
    clock.advance(31 * DAY)
    viewer = web.client("viewer")  # the first login has expired meanwhile
    assert key in keys(telemetry(viewer, "cold_days=30")["lists"]["cold"])
    assert key not in keys(telemetry(viewer, "cold_days=60")["lists"]["cold"])
    page = viewer.get("/telemetry?list=cold&cold_days=30")
    assert page.status_code == 200
    assert "Release tags are signed" in page.text
    assert "Never recalled" not in page.text  # one list alone


def test_why_did_you_mention_finds_the_recalls_by_key_and_by_words(
    web: Dashboard, engine: Engine
) -> None:
    key = remember(engine, "Staging deploys go through the blue-green switch on the load balancer")
    unrelated = remember(engine, "Unit tests run with pytest and xdist on four workers")
    viewer = web.client("viewer")
    # positive control: not recalled yet
    assert telemetry(viewer, f"key={key}")["log"]["entries"] == []
    assert key in recall(engine, "how do staging deploys switch traffic?", actor="agent-deploy")
    assert unrelated in recall(engine, "how are unit tests run?", actor="agent-tests")
    by_key = telemetry(viewer, f"key={key}")["log"]
    assert [(e["actor"], e["query"]) for e in by_key["entries"]] == [
        ("agent-deploy", "how do staging deploys switch traffic?")
    ]
    entry = by_key["entries"][0]
    matched = entry["results"][entry["matched_rank"] - 1]
    assert matched["key"] == key
    assert {"visibility", "recency", "experience"} <= set(matched["factors"])
    by_words = telemetry(viewer, "q=unit+tests")["log"]
    assert [e["actor"] for e in by_words["entries"]] == ["agent-tests"]
    page = viewer.get(f"/telemetry?key={key}")
    assert "agent-deploy" in page.text
    assert f'class="picked"><a href="/memory?key={quote(key)}"' in page.text
    assert f"{matched['score']} = {matched['similarity']}" in page.text
    assert "agent-tests" not in page.text


def test_bad_parameters_show_the_page_with_the_error_and_400(web: Dashboard) -> None:
    viewer = web.client("viewer")
    for query, words in (
        ("days=abc", "days must be"),
        ("days=3", "days must be"),
        ("list=bogus", "unknown list"),
        ("page=0&list=most", "page must be"),
        ("key=not-a-key", "is not a memory key"),
        ("q=x&before=zzz", "not a recall log cursor"),
        ("key=kenning:mem:knowledge:01&q=x", "not both"),
        ("q=" + "w" * 501, "the limit is 500"),
    ):
        page = viewer.get(f"/telemetry?{query}")
        assert page.status_code == 400, query
        assert words in page.text, query
        assert 'action="/telemetry#why"' in page.text  # the page again, with its forms
    assert viewer.get("/telemetry?format=json&days=abc").status_code == 400


def test_charts_show_the_engines_numbers(
    web: Dashboard, engine: Engine, clock: ManualClock
) -> None:
    remember(engine, "The payments team owns the ledger service")
    remember(engine, "Invoices are rendered with WeasyPrint")
    clock.advance(DAY)
    remember(
        engine, "We shipped the search rewrite on a Friday and rolled it back", namespace="episodic"
    )
    engine.memories.remember(
        Draft(content="Valkey 9.1 released with hash field expiry", kind="article"),
        actor="feed:valkey",
    )
    contradiction(engine)
    viewer = web.client("viewer")
    data = telemetry(viewer, "days=7")
    made = engine.activity.memories_created(7)
    chart = data["charts"]["memories"]
    assert chart["table"]["rows"] == [
        [day, *(made.series[ns][i] for ns in made.series)] for i, day in enumerate(made.days)
    ]
    by_day = {
        row[0]: dict(zip(chart["table"]["headers"][1:], row[1:], strict=True))
        for row in chart["table"]["rows"]
    }
    first, second = made.days[-2], made.days[-1]
    assert by_day[first]["knowledge"] == 2
    assert by_day[second] == {
        "episodic": 1,
        "knowledge": 3,
        "preference": 0,
        "project": 0,
        "skill": 0,
    }
    assert data["charts"]["feeds"]["table"]["rows"][-1] == [second, 1]
    assert data["charts"]["contradictions"]["table"]["rows"][-1] == [second, 1, 0]
    drawn = {
        (name, label): int(value)
        for name, label, value in RECT.findall(viewer.get("/telemetry?days=7").text)
    }
    assert drawn[("knowledge", first)] == 2
    assert drawn[("episodic", second)] == 1
    assert drawn[("opened", second)] == 1
    assert ("resolved", second) not in drawn


def test_a_resolved_contradiction_is_counted_on_the_day_it_was_resolved(
    web: Dashboard, engine: Engine, clock: ManualClock
) -> None:
    record_id, _, _ = contradiction(engine)
    clock.advance(2 * DAY)
    engine.contradictions.resolve(record_id, "keep_a", "a is current", actor="pytest")
    rows = telemetry(web.client("viewer"), "days=7")["charts"]["contradictions"]["table"]["rows"]
    assert [r[1:] for r in rows[-3:]] == [[1, 0], [0, 0], [0, 1]]


async def test_recall_latency_comes_from_the_mcp_servers_histogram(
    web: Dashboard, engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    # the real MCP server over HTTP, a process edge apart
    mcp = start_harness(engine, mcp_settings(settings))
    try:
        async with mcp.client("write") as client:
            await ok(
                client,
                "remember",
                {"content": "Latency is read from the MCP server's own histogram"},
            )
            for question in (
                "where is latency read from?",
                "which histogram?",
                "what does the dashboard chart?",
            ):
                await ok(client, "recall", {"query": question})
        web.settings = web_settings(settings, tmp_path, web_mcp_metrics_url=f"{mcp.base}/metrics")
        data = telemetry(web.client("viewer"))["latency"]
        histogram = mcp.metrics.get_sample_value(
            "kenning_mcp_tool_latency_seconds_count", {"tool": "recall"}
        )
        page = web.client("viewer").get("/telemetry")
    finally:
        mcp.service.stop()
    assert histogram == 3
    assert data["ok"] is True
    assert data["count"] == 3
    assert sum(row[1] for row in data["chart"]["table"]["rows"]) == 3
    assert "Recall latency on the MCP server" in page.text


def test_recall_latency_unavailable_is_said_not_drawn_as_zero(
    web: Dashboard, settings: Settings, tmp_path: Path
) -> None:
    web.settings = web_settings(
        settings, tmp_path, web_mcp_metrics_url=f"http://127.0.0.1:{free_port()}/metrics"
    )
    viewer = web.client("viewer")
    page = viewer.get("/telemetry")
    assert page.status_code == 200
    assert "Recall latency is unavailable" in page.text
    assert 'id="chart-latency-title"' not in page.text
    assert 'id="chart-memories-title"' in page.text  # the rest of the page stands


def test_the_overview_shows_llm_spend_against_the_caps(web: Dashboard, engine: Engine) -> None:
    viewer = web.client("viewer")
    quiet = viewer.get("/?format=json").json()["spend"]
    assert quiet["state"]["code"] == "off"  # no key in the tests' settings
    assert quiet["today"] == {"tokens": 0, "calls": 0, "failures": 0}
    ledger = UsageLedger(engine.store.client, engine.store.prefix)
    today = engine.llm.day()
    month_start = today[:8] + "01"
    ledger.add(today, "alpha", 1200)
    ledger.add(today, None, 300, failed=True)
    # the tests' fixed "now" (NOW) is the 21st: an earlier day of the month counts
    assert month_start != today
    ledger.add(month_start, "alpha", 500)
    spend = viewer.get("/?format=json").json()["spend"]
    earlier = 500
    assert spend["today"] == {"tokens": 1500, "calls": 2, "failures": 1}
    assert spend["this_month"]["tokens"] == 1500 + earlier
    assert spend["projects"]["alpha"] == {
        "today": 1200,
        "this_month": 1200 + earlier,
        "calls_today": 1,
        "calls_this_month": 2,
    }
    assert spend["projects"]["(no project)"] == {
        "today": 300,
        "this_month": 300,
        "calls_today": 1,
        "calls_this_month": 1,
    }
    page = viewer.get("/")
    assert 'id="spend-today">1,500<' in page.text
    assert "no API key" in page.text
    assert "sk-" not in page.text
