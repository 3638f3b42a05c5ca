"""The curation pages in real headless Chromium: approve a skill proposal after reading its diff,
create an account and log in as it, read the feeds page. Each checks the engine afterwards
through the engine and saves a screenshot (docs/images/dashboard-skills.png, -accounts.png,
-feeds.png when $KENNING_SCREENSHOTS=docs/images)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser

from kenning.access.accounts import Accounts
from kenning.core.clock import ManualClock
from kenning.engine import Engine
from tests.kenning.skill_history import DOMAIN, seed
from tests.web_ui.conftest import FAST_HASHER, PASSWORD, Dashboard
from tests.web_ui.test_browser import (  # noqa: F401 (fixtures)
    WIDER_THAN_SCREEN,
    live,
    menu,
    served,
    shots,
    signed_in,
)


@pytest.fixture
def live_feeds(feeds_web: Dashboard) -> Iterator[str]:
    yield from served(feeds_web)


async def test_approve_a_skill_after_reading_its_diff(
    browser: Browser,
    live: str,  # noqa: F811
    engine: Engine,
    clock: ManualClock,
    shots: Path,  # noqa: F811
) -> None:
    seed(engine)
    proposal = engine.skills.compile_skill(DOMAIN, actor="agent")
    page = await signed_in(browser, live, "admin")
    await menu(page, "Skills")
    card = page.locator(f"#p-{proposal.id}")
    diff = await card.locator("pre.diff").inner_text()
    # the person reads the very diff the sha belongs to
    assert diff.strip() == proposal.diff.strip()
    assert proposal.sha in await card.inner_text()
    await page.screenshot(path=str(shots / "dashboard-skills.png"), full_page=True)
    await card.get_by_role("button", name=f"Approve and write {DOMAIN}").click()
    await page.wait_for_selector("h1.ok")
    assert engine.skills.proposal(proposal.id).status == "written"
    assert engine.skills.get(DOMAIN).sha == proposal.sha
    assert engine.skills.get(DOMAIN).written_by == "web:admin"
    await page.context.close()


async def test_create_an_account_and_log_in_as_it(
    browser: Browser,
    live: str,  # noqa: F811
    engine: Engine,
    shots: Path,  # noqa: F811
) -> None:
    page = await signed_in(browser, live, "admin")
    await menu(page, "Accounts")
    await page.fill("#new-username", "carol")
    await page.select_option("#new-role", "editor")
    await page.fill("#new-password", PASSWORD)
    await page.fill("#new-again", PASSWORD)
    await page.screenshot(path=str(shots / "dashboard-accounts.png"), full_page=True)
    await page.get_by_role("button", name="Create account").click()
    await page.wait_for_selector("h1.ok")
    created = Accounts(engine.store, engine.ctx.clock, hasher=FAST_HASHER).get("carol")
    assert created is not None
    assert (created.role, created.disabled) == ("editor", False)
    carol = await signed_in(browser, live, "carol")
    assert "carol (editor)" in await carol.locator(".who").inner_text()
    nav = await carol.get_by_role("navigation", name="Main").inner_text()
    assert "Duplicates" in nav
    assert "Accounts" not in nav  # an editor does not manage accounts
    await carol.context.close()
    await page.context.close()


async def test_the_feeds_page(
    browser: Browser,
    live_feeds: str,
    feeds_web: Dashboard,
    shots: Path,  # noqa: F811
) -> None:
    engine = feeds_web.engine
    for name in ("python-news", "broken"):
        engine.feeds.run(engine.feeds.feed(name))
    assert engine.feeds.states.load("python-news").last_counts["new"] == 3
    page = await signed_in(browser, live_feeds, "viewer")
    await menu(page, "Feeds")
    assert "new 3" in await page.locator("#feed-python-news").inner_text()
    assert "500" in await page.locator("#feed-broken").inner_text()
    assert "line 7" in await page.locator("[id='feed-Bad Name']").inner_text()
    await page.screenshot(path=str(shots / "dashboard-feeds.png"), full_page=True)
    await page.context.close()


async def test_the_curation_pages_on_a_phone(
    browser: Browser,
    live_feeds: str,
    feeds_web: Dashboard,
) -> None:
    engine = feeds_web.engine
    seed(engine)
    engine.skills.compile_skill(DOMAIN, actor="agent")
    engine.feeds.run(engine.feeds.feed("broken"))
    page = await signed_in(browser, live_feeds, "admin")
    await page.set_viewport_size({"width": 390, "height": 844})
    for path in ("/skills", "/feeds", "/accounts", "/connections", "/memories?trust=stated"):
        await page.goto(live_feeds + path)
        assert await page.locator("h1").count() == 1, path
        # nothing forces sideways scrolling
        assert await page.evaluate(WIDER_THAN_SCREEN) == [], path
    await page.context.close()


async def test_requeue_a_parked_job_from_the_queue_page(
    browser: Browser,
    live: str,  # noqa: F811
    engine: Engine,
) -> None:
    queue = engine.enrichment.queue
    queue.push("extract_facts", {"key": "k:parked"})
    (job,) = queue.claim("pytest", count=1, visibility_ms=60_000)
    queue.park(job, "extract_facts: the LLM's reply was not JSON")
    (parked,) = engine.enrichment.parked()
    page = await signed_in(browser, live, "editor")
    await menu(page, "Queue")
    row = page.locator("#parked tr", has_text=parked.id)
    assert "the LLM's reply was not JSON" in await row.inner_text()  # the reason, visible
    await row.get_by_role("button", name="Requeue").click()
    await page.wait_for_selector("h1.ok")
    status = engine.enrichment.status()
    assert (status.waiting, status.parked) == (1, 0)
    events = engine.history.audit_log(action="queue_requeue", limit=1).events
    assert [e.actor for e in events] == ["web:editor"]
    await page.context.close()
