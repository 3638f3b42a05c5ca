#!/usr/bin/env python3
"""A $BROWSER with nobody at it: opens the authorization URL an MCP client hands it in headless
Chromium, logs in to Kenning's login page, allows what the consent page ticks, and returns once the
browser has been sent back to the client. For trying remote access end to end on a machine with no
desktop (docs/remote-access.md); it types a password, so give it a test account only.

    OAUTH_LOGIN_USER=alice OAUTH_LOGIN_PASSWORD=... BROWSER="$PWD/scripts/oauth_login.py" \\
        npx mcp-remote http://127.0.0.1:8765/mcp

Needs Playwright (a test dependency: run it with the virtualenv's python3 first on PATH) and
Debian's /usr/bin/chromium. Exits 1, saying why, when the login or the consent is refused. With
OAUTH_LOGIN_SHOTS=DIR it saves the two pages as DIR/remote-access-{login,consent}.png (docs/images
has them from tests/mcp_server/test_clients.py's mcp-remote run).
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

from playwright.async_api import Page, async_playwright

CHROMIUM = os.environ.get("OAUTH_LOGIN_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
SECONDS = 60
VIEWPORT = {"width": 720, "height": 640}


def origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


async def refused(page: Page, step: str) -> str:
    alert = page.get_by_role("alert")
    said = await alert.inner_text() if await alert.count() else await page.inner_text("body")
    return f"{step} refused: {said.strip()[:300]}"


async def shoot(page: Page, shots: Path | None, name: str) -> None:
    if shots is not None:
        await page.screenshot(path=str(shots / f"remote-access-{name}.png"), full_page=True)


async def log_in_and_allow(
    url: str, username: str, password: str, shots: Path | None = None
) -> str:
    """The URL the browser was sent back to (the client's callback, without its query)."""
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = await browser.new_page(viewport=VIEWPORT)  # type: ignore[arg-type]
        page.set_default_timeout(SECONDS * 1000)
        await page.goto(url)
        kenning = origin(page.url)  # after /authorize's redirect: the login page
        await shoot(page, shots, "login")
        await page.get_by_label("Username").fill(username)
        await page.get_by_label("Password").fill(password)
        async with page.expect_response(lambda r: r.request.method == "POST") as answered:
            await page.get_by_role("button", name="Log in").click()
        if (await answered.value).status != 303:
            raise SystemExit(await refused(page, "the login was"))
        await page.get_by_role("button", name="Allow").wait_for()
        await shoot(page, shots, "consent")
        async with page.expect_response(lambda r: r.request.method == "POST") as answered:
            await page.get_by_role("button", name="Allow").click()
        if (await answered.value).status != 302:
            raise SystemExit(await refused(page, "the consent was"))
        await page.wait_for_url(lambda at: origin(at) != kenning, wait_until="load")
        back = urlsplit(page.url)
        await browser.close()
        return f"{back.scheme}://{back.netloc}{back.path}"


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: oauth_login.py AUTHORIZATION_URL", file=sys.stderr)
        return 2
    user, password = os.environ.get("OAUTH_LOGIN_USER"), os.environ.get("OAUTH_LOGIN_PASSWORD")
    if not user or not password:
        print("set OAUTH_LOGIN_USER and OAUTH_LOGIN_PASSWORD (a Kenning account)", file=sys.stderr)
        return 2
    shots = os.environ.get("OAUTH_LOGIN_SHOTS")
    back = asyncio.run(log_in_and_allow(argv[1], user, password, Path(shots) if shots else None))
    print(f"logged in as {user}, allowed, and sent back to {back}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
