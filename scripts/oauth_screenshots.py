"""Regenerate docs/remote-access-{login,consent}.png: the OAuth login and consent pages, rendered
from mcp_server/oauth/templates with sample values, photographed by headless Chromium.

    PYTHONPATH=. python scripts/oauth_screenshots.py
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from playwright.async_api import async_playwright

from mcp_server.oauth.pages import SCOPE_TEXT, _templates

ROOT = Path(__file__).resolve().parent.parent
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def pages() -> dict[str, str]:
    scopes = [
        {"name": s, "text": SCOPE_TEXT[s], "allowed": s != "admin"}
        for s in ("read", "write", "admin", "offline_access")
    ]
    login = _templates.get_template("login.html").render(
        request_id="sample",
        csrf="sample",
        error="",
        client_name="Claude Code",
        action="/oauth/login",
    )
    consent = _templates.get_template("consent.html").render(
        request_id="sample",
        csrf="sample",
        client_name="Claude Code",
        redirect_host="localhost",
        redirect_scheme="http",
        scopes=scopes,
        username="alice",
        role="editor",
        error="",
        action="/oauth/consent",
    )
    return {"login": login, "consent": consent}


async def main() -> None:
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = await browser.new_page(viewport={"width": 720, "height": 640})
        for name, html in pages().items():
            await page.set_content(html)
            await page.screenshot(
                path=str(ROOT / "docs" / f"remote-access-{name}.png"), full_page=True
            )
        await browser.close()


if __name__ == "__main__":
    asyncio.run(main())
