"""Dashboard defects found in a real browser, checked in headless Chromium: a failed login's
message, words broken inside the memories table's cells at 1280 px, and automatic suppressions
(from an abandonment) marked, with what lifting one brings back said before it is lifted."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser, Page

from kenning.engine import Engine
from tests.web_ui.conftest import remember
from tests.web_ui.test_browser import (  # noqa: F401 (fixtures)
    VIEWPORT,
    browser,
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


async def log_in_as(browser: Browser, base: str, username: str, password: str) -> Page:  # noqa: F811
    context = await browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    page = await context.new_page()
    await page.goto(f"{base}/login")
    await page.get_by_label("User name").fill(username)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Log in").click()
    return page


async def test_a_failed_login_says_why_in_words(
    browser: Browser,  # noqa: F811
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
    browser: Browser,  # noqa: F811
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
