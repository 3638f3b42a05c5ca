"""The dashboard in a real headless Chromium (Playwright, Debian's /usr/bin/chromium): log in,
resolve a contradiction, merge a duplicate, suppress after reading the preview, restore a backup
after its dry run. Each checks the engine state afterwards through the engine and saves a
screenshot (to $KENNING_SCREENSHOTS when set -- docs/images is where docs/dashboard.md takes them
from -- else to the test's temporary directory)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page

from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.llm import spend
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.store.llm import UsageLedger
from tests.mcp_server.conftest import mcp_settings, ok, start_harness
from tests.web_ui.conftest import (
    PASSWORD,
    Dashboard,
    contradiction,
    duplicates,
    remember,
    web_settings,
)
from web_ui.guard import COOKIE
from web_ui.pages.overview import spend_view
from web_ui.service import WebService

VIEWPORT = {"width": 1280, "height": 900}
# Elements reaching past the right edge of the screen, except inside a box that scrolls on its own.
WIDER_THAN_SCREEN = """() => [...document.querySelectorAll('body *')]
    .filter(e => !e.closest('.table-wrap, .chart-wrap') && e.getBoundingClientRect().right > window.innerWidth + 1)
    .map(e => e.tagName + '.' + e.className)"""  # noqa: E501


def served(web: Dashboard) -> Iterator[str]:
    """``web`` served by uvicorn on a free port (as `kenning web` serves it),
    until the generator ends."""
    service = WebService(web.engine, web.settings, web.logins)
    service.start()
    yield service.url.rstrip("/")
    service.stop()


@pytest.fixture
def live(web: Dashboard) -> Iterator[str]:
    yield from served(web)


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("KENNING_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def signed_in(browser: Browser, base: str, username: str) -> Page:
    context = await browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    page = await context.new_page()
    await page.goto(f"{base}/")
    await page.get_by_label("User name").fill(username)
    await page.get_by_label("Password").fill(PASSWORD)
    await page.get_by_role("button", name="Log in").click()
    await page.wait_for_selector("h1:has-text('Overview')")
    return page


async def menu(page: Page, name: str) -> None:
    await (
        page.get_by_role("navigation", name="Main")
        .get_by_role("link", name=name, exact=True)
        .click()
    )


async def test_log_in(
    browser: Browser, live: str, web: Dashboard, engine: Engine, shots: Path
) -> None:
    contradiction(engine)
    remember(engine, "Releases are cut from main every second Tuesday", project="kenning")
    # spend recorded while a key was set
    ledger = UsageLedger(engine.store.client, engine.store.prefix)
    ledger.add(engine.llm.day(), "kenning", 18_400)
    ledger.add(engine.llm.day(), "shop", 2_150, failed=True)
    page = await signed_in(browser, live, "editor")
    cookies = {c["name"]: c for c in await page.context.cookies()}
    session = web.logins.current(cookies[COOKIE]["value"])
    assert session is not None
    assert (session.username, session.role) == ("editor", "editor")
    assert cookies[COOKIE]["httpOnly"] is True
    assert await page.locator(".card .big").first.inner_text() == "3"
    assert (
        await page.locator("#spend-state").inner_text()
        == spend_view(spend.report(engine.llm))["state"]["detail"]
    )
    await page.screenshot(path=str(shots / "dashboard-overview.png"), full_page=True)
    await page.context.close()


async def test_resolve_a_contradiction(
    browser: Browser, live: str, engine: Engine, shots: Path
) -> None:
    record_id, _a, b = contradiction(engine)
    page = await signed_in(browser, live, "editor")
    await menu(page, "Contradictions")
    card = page.locator(f"#c-{record_id}")
    await card.get_by_label("keep a").check()
    await card.get_by_label('Note (required for "both valid")').fill(
        "pickle is unsafe for shared caches"
    )
    await page.screenshot(path=str(shots / "dashboard-contradictions.png"), full_page=True)
    await card.get_by_role("button", name=f"Resolve {record_id}").click()
    await page.wait_for_selector("h1.ok")
    assert engine.contradictions.get(record_id).status == "resolved"
    assert engine.contradictions.get(record_id).decision == "keep_a"
    assert engine.memories.get(b).trust == "superseded"
    await page.screenshot(path=str(shots / "dashboard-resolved.png"), full_page=True)
    await page.context.close()


async def test_merge_a_duplicate(browser: Browser, live: str, engine: Engine, shots: Path) -> None:
    first, second = duplicates(engine)
    keep, other = (
        (first, second)
        if engine.duplicates.find("knowledge").clusters[0].keep == first
        else (second, first)
    )
    page = await signed_in(browser, live, "editor")
    await menu(page, "Duplicates")
    await page.get_by_label("Reason").fill("the same schedule, stated twice")
    await page.screenshot(path=str(shots / "dashboard-duplicates.png"), full_page=True)
    await page.get_by_role("button", name="Merge cluster 1").click()
    await page.wait_for_selector("h1.ok")
    assert engine.memories.get(other).state == "archived"
    assert engine.memories.get(keep).state == "active"
    await page.context.close()


async def test_suppress_after_reading_the_preview(
    browser: Browser, live: str, engine: Engine, shots: Path
) -> None:
    remember(engine, "The legacy billing cron posts invoices every hour")
    remember(engine, "Restart the billing cron after a deploy of the invoicing service")
    page = await signed_in(browser, live, "editor")
    await menu(page, "Suppressions")
    await page.get_by_label("Word or phrase").fill("billing cron")
    await page.get_by_label("Reason").fill("retired in march")
    await page.get_by_role("button", name="Preview").click()
    assert "It would hide 2 memories" in await page.locator("#impact").inner_text()
    assert engine.suppressions.list_suppressions() == []  # the preview wrote nothing
    await page.screenshot(path=str(shots / "dashboard-suppression-preview.png"), full_page=True)
    await page.get_by_role("button", name="Suppress “billing cron”").click()
    await page.wait_for_selector("h1.ok")
    assert [(s.suppression.term, s.hides) for s in engine.suppressions.list_suppressions()] == [
        ("billing cron", 2)
    ]
    await page.context.close()


async def test_restore_a_backup_after_its_dry_run(
    browser: Browser, live: str, engine: Engine, shots: Path
) -> None:
    key = remember(engine, "Production runs on three availability zones")
    engine.backups.backup(label="nightly", actor="pytest")
    engine.lifecycle.forget(key, confirm=True, actor="pytest", reason="removed by mistake")
    page = await signed_in(browser, live, "admin")
    await menu(page, "Backups")
    await page.get_by_role("link", name="Dry run").click()
    plan = page.locator("#plan")
    assert "memories 1 0 0" in " ".join((await plan.inner_text()).split())
    assert not engine.store.memories.exists(key)  # the dry run wrote nothing
    await page.screenshot(path=str(shots / "dashboard-backup-dry-run.png"), full_page=True)
    await page.get_by_role("button", name="Restore kenning-backup-").click()
    await page.wait_for_selector("h1.ok")
    assert engine.memories.get(key).content == "Production runs on three availability zones"
    await page.context.close()


async def test_the_overview_on_a_phone(
    browser: Browser, live: str, engine: Engine, shots: Path
) -> None:
    remember(engine, "Releases are cut from main every second Tuesday", project="kenning")
    page = await signed_in(browser, live, "viewer")
    await page.set_viewport_size({"width": 390, "height": 844})
    wider = await page.evaluate(WIDER_THAN_SCREEN)
    # nothing forces sideways scrolling (scrollable tables scroll inside their box)
    assert wider == []
    await page.screenshot(path=str(shots / "dashboard-phone.png"), full_page=True)
    await page.context.close()


async def test_why_did_you_mention_on_the_telemetry_page(
    browser: Browser,
    web: Dashboard,
    engine: Engine,
    clock: ManualClock,
    settings: Settings,
    tmp_path: Path,
    shots: Path,
) -> None:
    key = seed_telemetry(engine, clock)
    # the MCP server's own latency histogram, scraped
    mcp = start_harness(engine, mcp_settings(settings))
    async with mcp.client("write") as client:
        for question in (
            "where do payment webhooks go?",
            "how are invoices rendered?",
            "who owns the ledger?",
        ):
            await ok(client, "recall", {"query": question})
    service = WebService(
        engine,
        web_settings(settings, tmp_path, web_mcp_metrics_url=f"{mcp.base}/metrics"),
        web.logins,
    )
    service.start()
    try:
        page = await signed_in(browser, service.url.rstrip("/"), "viewer")
        await menu(page, "Telemetry")
        await page.get_by_label("Memory key").fill(key)
        await page.get_by_role("button", name="Search the log").click()
        rows = page.locator("#recall-log tbody tr")
        await rows.first.wait_for()
        logged = engine.telemetry.search_log(key=key).entries
        # two recalls through the engine, one through MCP
        assert await rows.count() == len(logged) == 3
        shown = await page.locator("#recall-log").inner_text()
        assert [e.actor for e in logged] == ["test-write", "agent-billing", "agent-billing"]
        assert all(e.query in shown for e in logged)
        assert await page.locator("#chart-latency svg").count() == 1
        await page.screenshot(path=str(shots / "dashboard-telemetry.png"), full_page=True)
        await page.set_viewport_size({"width": 390, "height": 844})
        assert await page.evaluate(WIDER_THAN_SCREEN) == []
        await page.context.close()
    finally:
        service.stop()
        mcp.service.stop()


def seed_telemetry(engine: Engine, clock: ManualClock) -> str:
    """A fortnight of memories, recalls, a contradiction and feed articles; the
    key of the webhook memory."""
    notes = [
        "The ledger service is owned by the payments team",
        "Invoices are rendered with WeasyPrint",
        "Refunds over 500 EUR need a second approver",
        "The billing cron runs at 02:00 UTC",
        "Payment webhooks arrive at /hooks/stripe and are verified with the signing secret",
        "Card data never touches our servers: Stripe Elements only",
    ]
    key = ""
    for day in range(12):
        for i in range(day % 3 + 1):
            note = notes[(day + i) % len(notes)]
            content = f"{note} (checked on day {day}, note {i})"
            namespace = "episodic" if (day + i) % 4 == 0 else "knowledge"
            stored = engine.memories.remember(  # repeats, not changes: no contradiction check
                Draft(content=content, project="shop", namespace=namespace),
                actor="pytest",
                allow_duplicate=True,
                check_contradictions=False,
            )
            key = stored.key if "webhooks" in content and not key else key
        if day % 4 == 1:
            engine.memories.remember(
                Draft(content=f"Valkey weekly: release notes {day}", kind="article"),
                actor="feed:valkey",
                allow_duplicate=True,
            )
        clock.advance(86_400)
    contradiction(engine)
    for actor, question in (
        ("agent-billing", "where do payment webhooks arrive?"),
        ("agent-ops", "which cron runs at night?"),
        ("agent-billing", "how are stripe webhooks verified?"),
    ):
        engine.recaller.recall(RecallRequest(question, projects=["shop"], actor=actor))
    engine.store.memories.recalls.fold()
    assert key
    return key
