"""A person at a real Chromium (Playwright, Debian's /usr/bin/chromium, launched as in
tests/web_ui/test_browser.py) on the OAuth pages, and the small local sites those tests need: a
client's loopback callback, which takes the code as a native client's listener does, and another
origin's page, for the cross-site negatives.

    async with chromium_context(browser) as context:
        landed = await connect(context, kit.authorize_url(...), callback)  # the callback's query
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio.to_thread
import pytest
from playwright.async_api import Browser, BrowserContext, Page

from tests.conftest import free_port
from tests.mcp_server.oauth_kit import PASSWORD

VIEWPORT = {"width": 900, "height": 760}
CONSENT_HEADING = "wants to use your Kenning memory"


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where screenshots go: $KENNING_SCREENSHOTS when set, else the test's directory."""
    folder = Path(os.environ.get("KENNING_SCREENSHOTS") or tmp_path).resolve()
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@asynccontextmanager
async def chromium_context(browser: Browser) -> AsyncIterator[BrowserContext]:
    """A fresh profile (no cookies), closed afterwards."""
    context = await browser.new_context(viewport=VIEWPORT)  # type: ignore[arg-type]
    try:
        yield context
    finally:
        await context.close()


@dataclass
class Hit:
    path: str
    query: dict[str, str]
    headers: dict[str, str]


@dataclass
class LocalSite:
    """A small HTTP server on loopback: ``pages`` maps a path to (html, extra headers); every
    request is kept in ``hits``. ``host`` names it in ``url`` (``localhost`` is another site than
    ``127.0.0.1`` to a browser)."""

    pages: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)
    host: str = "127.0.0.1"
    port: int = field(default_factory=free_port)
    hits: list[Hit] = field(default_factory=list)
    _arrived: threading.Condition = field(default_factory=threading.Condition)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def wait(self, path: str, timeout: float = 30.0) -> Hit:
        """The first request to ``path`` (waiting for it)."""
        return await anyio.to_thread.run_sync(self._wait, path, timeout)

    def _wait(self, path: str, timeout: float) -> Hit:
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                found = [h for h in self.hits if h.path == path]
                if found:
                    return found[0]
                left = deadline - time.monotonic()
                assert left > 0, f"nothing arrived at {self.url}{path} in {timeout}s: {self.hits}"
                self._arrived.wait(left)

    def record(self, handler: BaseHTTPRequestHandler) -> tuple[str, dict[str, str]]:
        parts = urlsplit(handler.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        with self._arrived:
            self.hits.append(Hit(parts.path, query, dict(handler.headers.items())))
            self._arrived.notify_all()
        return self.pages.get(parts.path, ("<p>You may close this window.</p>", {}))


@contextmanager
def serving(site: LocalSite) -> Iterator[LocalSite]:
    """``site`` listening on its port until the block ends."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            html, headers = site.record(self)
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", site.port), Handler)
    thread = threading.Thread(target=server.serve_forever, name="local-site", daemon=True)
    thread.start()
    try:
        yield site
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


async def log_in(page: Page, username: str = "alice", password: str = PASSWORD) -> None:
    """Type the account into the login page and submit it, as a person does."""
    await page.get_by_label("Username").fill(username)
    await page.get_by_label("Password").fill(password)
    await page.get_by_role("button", name="Log in").click()


async def connect(
    context: BrowserContext,
    authorize_url: str,
    callback: LocalSite,
    *,
    username: str = "alice",
    path: str = "/callback",
) -> Hit:
    """Open ``authorize_url``, log in, allow what is ticked; the request the browser then made
    to the client's callback (its query holds the code and the state)."""
    page = await context.new_page()
    await page.goto(authorize_url)
    await page.wait_for_selector("input[name=password]")
    async with page.expect_response(lambda r: r.request.method == "POST") as answered:
        await log_in(page, username)
    login = await answered.value
    assert login.status == 303, f"the login was refused: {login.status} {await login.text()}"
    await page.wait_for_selector(f"h1:has-text('{CONSENT_HEADING}')")
    await page.get_by_role("button", name="Allow").click()
    return await callback.wait(path)  # the page stays open with its context
