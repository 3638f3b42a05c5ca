"""Dashboard defects found in a real browser, checked in headless Chromium: a failed login's
message, words broken inside the memories table's cells at 1280 px, and automatic suppressions
(from an abandonment) marked, with what lifting one brings back said before it is lifted."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, Page

from kenning.engine import Engine
from kenning.memory.experience import Approach
from tests.web_ui.conftest import remember
from tests.web_ui.test_browser import (  # noqa: F401 (fixtures)
    VIEWPORT,
    live,
    shots,
)

# Every word of every cell of the table's text, and the words a line break cuts in two: a word is
# broken when its own box spans more than one line (a Range over it has more than one rect).
# Words are split at spaces and hyphens, where a browser may wrap without breaking a word.
BROKEN_WORDS = """(table) => {
  const broken = [], seen = [];
  for (const cell of table.querySelectorAll('th, td')) {
    if (cell.closest('.sr')) continue;
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (node.parentElement.closest('.sr')) continue;  // read aloud, never laid out
      const parts = node.textContent.matchAll(/[^\\s\\-]+/g);
      for (const part of parts) {
        const range = document.createRange();
        range.setStart(node, part.index);
        range.setEnd(node, part.index + part[0].length);
        const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top)));
        seen.push(part[0]);
        if (lines.size > 1) broken.push(part[0]);
      }
    }
  }
  return {broken, seen: seen.length};
}"""
# The rule the dashboard once had on table cells (set through the CSSOM: the page's CSP refuses
# inline style): a cell may break a word anywhere, so the table squeezes its columns.
OLD_RULE = """(table) => table.querySelectorAll('th, td')
    .forEach(c => c.style.overflowWrap = 'anywhere')"""


async def log_in_as(
    browser: Browser,
    base: str,
    username: str,
    password: str,
) -> Page:
    context = await browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    page = await context.new_page()
    await page.goto(f"{base}/login")
    await page.get_by_label("User name").fill(username)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Log in").click()
    return page


async def test_a_failed_login_says_why_in_words(
    browser: Browser,
    live: str,  # noqa: F811
    shots: Path,  # noqa: F811
) -> None:
    page = await log_in_as(browser, live, "editor", "not the password")
    alert = page.get_by_role("alert")
    await alert.wait_for()
    said = " ".join((await alert.inner_text()).split())
    assert said == "Not signed in: Wrong user name or password, or the account is disabled."
    body = await page.locator("main").inner_text()
    assert "built-in method" not in body
    assert "<" not in body
    assert await page.locator("h1").inner_text() == "Log in"
    await page.screenshot(path=str(shots / "dashboard-login-failed.png"), full_page=True)
    await page.context.close()


async def seed_memories(engine: Engine) -> None:
    for i, (content, project, tags) in enumerate(
        (
            ("Deploys of the billing service go through the blue green switch", "payments", "ops"),
            ("The staging database is refreshed from production every Sunday", "platform", "db"),
            ("Use the recorded fixtures when the payment provider sandbox is down", "payments", ""),
            ("Feature flags live in the configuration service, never in code", "kenning", "flags"),
        )
    ):
        remember(
            engine,
            content,
            project=project,
            tags=[tags, "important"] if tags else [],
            namespace="knowledge" if i % 2 else "episodic",
        )


async def test_the_memories_table_breaks_no_word_at_1280_px(
    browser: Browser,
    live: str,  # noqa: F811
    engine: Engine,
    shots: Path,  # noqa: F811
) -> None:
    await seed_memories(engine)
    page = await log_in_as(browser, live, "editor", "correct horse battery")
    await page.wait_for_selector("h1:has-text('Overview')")
    assert page.viewport_size == {"width": 1280, "height": 900}
    await page.goto(f"{live}/memories")
    table = page.locator("main table").first
    assert await table.locator("tbody tr").count() == 4
    found = await table.evaluate(BROKEN_WORDS)
    assert found["seen"] > 60  # the check read the whole table: headers and cells
    assert found["broken"] == []
    wrap = await table.locator("td").first.evaluate("c => getComputedStyle(c).overflowWrap")
    assert wrap == "break-word"
    await page.screenshot(path=str(shots / "dashboard-memories.png"), full_page=True)
    # the positive control: the old rule on the same page breaks words, and the check sees it
    await table.evaluate(OLD_RULE)
    squeezed = await table.evaluate(BROKEN_WORDS)
    assert {"namespace", "active"} & set(squeezed["broken"]), squeezed
    await page.context.close()


async def test_an_automatic_suppression_is_marked_and_its_lift_says_what_comes_back(
    browser: Browser,
    live: str,  # noqa: F811
    engine: Engine,
    shots: Path,  # noqa: F811
) -> None:
    logged = engine.experience.log_abandoned(
        Approach("Celery", "library", "too heavy for two nightly jobs"),
        effort=5,
        project="alpha",
        actor="agent-ops",
    )
    assert logged.suppressed == ["celery"]
    hidden = remember(engine, "The nightly report runs as a Celery task on the worker box")
    remember(engine, "The legacy billing cron posts invoices every hour")
    engine.suppressions.suppress("billing cron", "retired in march", actor="web:editor")
    page = await log_in_as(browser, live, "editor", "correct horse battery")
    await page.wait_for_selector("h1:has-text('Overview')")
    await page.goto(f"{live}/suppressions")
    auto, manual = (
        page.locator("tr[data-term='celery']"),
        page.locator("tr[data-term='billing cron']"),
    )
    assert "automatic" in await auto.locator(".badge").inner_text()
    assert logged.key in await auto.inner_text()  # where it came from
    assert await manual.locator(".badge").count() == 0  # a person's own is not marked

    await auto.get_by_role("button", name="Lift celery…").click()
    preview = page.locator("#lifting")
    await preview.wait_for()
    assert "Made automatically" in await preview.locator("#lift-auto").inner_text()
    said = " ".join((await preview.locator("#brings-back").inner_text()).split())
    assert said == "Lifting it brings back 1 memories of alpha:"
    assert hidden in await preview.inner_text()  # the memory that comes back, named
    assert {s.suppression.term for s in engine.suppressions.list_suppressions()} == {
        "celery",
        "billing cron",
    }  # reading what comes back lifted nothing
    await page.screenshot(path=str(shots / "dashboard-lift-preview.png"), full_page=True)
    await preview.get_by_label("Reason for lifting “celery”").fill("we use Celery again")
    await preview.get_by_role("button", name="Lift “celery”").click()
    await page.wait_for_selector("h1.ok")
    assert [s.suppression.term for s in engine.suppressions.list_suppressions()] == ["billing cron"]
    event = engine.history.audit_log(action="unsuppress", limit=1).events[0]
    assert (event.actor, event.reason) == ("web:editor", "we use Celery again")

    # a hand-made suppression's lift says what comes back, without the automatic warning
    await page.goto(f"{live}/suppressions")
    await page.get_by_role("button", name="Lift billing cron…").click()
    await page.locator("#lifting").wait_for()
    assert await page.locator("#lift-auto").count() == 0
    assert "brings back 1 memories" in await page.locator("#brings-back").inner_text()
    await page.context.close()
