"""The Connections page in real headless Chromium: a client registered through the MCP server's real
DCR endpoint and a grant obtained through the OAuth flow (the httpx kit of tests/mcp_server plays
the MCP client) are listed with when they were last used; revoking the grant, then a client, in the
browser ends their tokens at once (an MCP call with the old access token is refused after it
worked before); the page is the admin's only. Screenshot: docs/images/dashboard-connections.png
when $KENNING_SCREENSHOTS=docs/images."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page

from kenning.core.models import iso
from kenning.core.settings import Settings
from kenning.engine import Engine
from tests.mcp_server.oauth_kit import OAuthKit, start_oauth
from tests.web_ui.conftest import Dashboard, web_settings
from tests.web_ui.test_browser import (  # noqa: F401 (fixtures)
    live,
    menu,
    served,
    shots,
    signed_in,
)

CURSOR = "cursor://anysphere.cursor-mcp/oauth/callback"
CLAUDE_AI = "https://claude.ai/api/mcp/auth_callback"


@pytest.fixture
def kit(engine: Engine, settings: Settings) -> Iterator[OAuthKit]:
    """The MCP server with OAuth on the dashboard's store (one key prefix); alice may log in."""
    started = start_oauth(engine, settings, users={"alice": "editor"})
    yield started
    started.service.stop()


@pytest.fixture
def live_oauth(web: Dashboard, kit: OAuthKit, tmp_path: Path) -> Iterator[str]:
    """The dashboard of an installation with OAuth on (as `kenning up` with KENNING_OAUTH=true)."""
    tuned = web_settings(
        web.settings, tmp_path, oauth=True, mcp_public_url=str(kit.settings.mcp_public_url)
    )
    yield from served(Dashboard(web.engine, tuned))


def row(page: Page, client_id: str, username: str | None = None) -> str:
    table = "#grant-table" if username else "#client-table"
    who = f"[data-username='{username}']" if username else ""
    return f"{table} tr[data-client='{client_id}']{who}"


async def test_the_connections_page_lists_and_revokes(
    browser: Browser,
    live_oauth: str,
    kit: OAuthKit,
    engine: Engine,
    shots: Path,  # noqa: F811
) -> None:
    cursor = await kit.register(
        client_name="Cursor", redirect_uris=[CURSOR], token_endpoint_auth_method="none"
    )
    tokens = await kit.tokens(cursor, scope="read write offline_access")
    kit.clock.advance(120)
    refreshed = await kit.refresh(cursor, tokens["refresh_token"])
    assert refreshed.status_code == 200, refreshed.text
    access = refreshed.json()["access_token"]
    assert await kit.mcp_status(access) == 200  # the positive control: the token works
    page = await signed_in(browser, live_oauth, "admin")
    await menu(page, "Connections")
    assert await page.locator("#oauth-off").count() == 0
    client_row = await page.locator(row(page, cursor.client_id)).inner_text()
    assert "Cursor" in client_row
    assert CURSOR in client_row
    assert str(iso(kit.clock.now()))[:16].replace("T", " ") in client_row  # last used
    grant_row = page.locator(row(page, cursor.client_id, "alice"))
    cells = [await c.inner_text() for c in await grant_row.locator("td").all()]
    assert cells[0] == "alice"
    assert cells[2] == "read write offline_access"
    assert cells[4] == str(iso(kit.clock.now()))[:16].replace("T", " ") + " UTC"  # last refresh
    assert cells[5] == "1"  # one live token family
    # the page's facts as JSON, through the same session
    data = await (await page.request.get(f"{live_oauth}/connections?format=json")).json()
    assert [c["client_id"] for c in data["clients"]] == [cursor.client_id]
    assert [(g["username"], g["client_id"]) for g in data["grants"]] == [
        ("alice", cursor.client_id)
    ]
    await page.screenshot(path=str(shots / "dashboard-connections.png"), full_page=True)

    await grant_row.locator("summary").click()
    await grant_row.get_by_label("Reason for revoking alice's grant to Cursor").fill("lost laptop")
    await grant_row.get_by_role("button", name="Revoke alice's grant to Cursor").click()
    await page.wait_for_selector("h1.ok")
    assert await kit.mcp_status(access) == 401  # ended at once
    again = await kit.refresh(cursor, refreshed.json()["refresh_token"])
    assert again.status_code in (400, 401)
    assert "access_token" not in again.text
    event = engine.history.audit_log(action="oauth_grant_revoke", limit=1).events[0]
    assert (event.actor, event.reason) == ("web:admin", "lost laptop")
    await page.goto(f"{live_oauth}/connections")
    assert await page.locator(row(page, cursor.client_id)).count() == 1  # the client stays
    assert await page.locator("#grant-table tbody").inner_text() == (
        "Nobody has granted a client access."
    )

    claude = await kit.register(
        client_name="claude.ai", redirect_uris=[CLAUDE_AI], token_endpoint_auth_method="none"
    )
    second = (await kit.tokens(claude, scope="read"))["access_token"]
    assert await kit.mcp_status(second) == 200
    await page.goto(f"{live_oauth}/connections")
    client_row_2 = page.locator(row(page, claude.client_id))
    await client_row_2.locator("summary").click()
    await client_row_2.get_by_label("Reason for revoking claude.ai").fill("not ours")
    await client_row_2.get_by_role("button", name="Revoke client claude.ai").click()
    await page.wait_for_selector("h1.ok")
    assert await kit.mcp_status(second) == 401
    assert engine.history.audit_log(action="oauth_client_revoke", limit=1).events[0].reason == (
        "not ours"
    )
    await page.goto(f"{live_oauth}/connections")
    assert await page.locator(row(page, claude.client_id)).count() == 0
    assert await page.locator(row(page, cursor.client_id)).count() == 1
    await page.context.close()


async def test_a_revoke_without_a_reason_changes_nothing(
    browser: Browser,
    live: str,  # noqa: F811
    kit: OAuthKit,
) -> None:
    cursor = await kit.register(
        client_name="Cursor", redirect_uris=[CURSOR], token_endpoint_auth_method="none"
    )
    access = (await kit.tokens(cursor, scope="read"))["access_token"]
    page = await signed_in(browser, live, "admin")
    await page.goto(f"{live}/connections")
    client_row = page.locator(row(page, cursor.client_id))
    await client_row.locator("summary").click()
    # the browser's own check (required) is bypassed, so the engine's is what refuses
    await client_row.get_by_label("Reason for revoking Cursor").evaluate(
        "e => e.removeAttribute('required')"
    )
    await client_row.get_by_role("button", name="Revoke client Cursor").click()
    alert = page.get_by_role("alert")
    await alert.wait_for()
    assert "a reason is required" in await alert.inner_text()
    assert await kit.mcp_status(access) == 200
    await page.context.close()


async def test_only_an_admin_sees_the_connections(
    browser: Browser,
    live: str,  # noqa: F811
) -> None:
    editor = await signed_in(browser, live, "editor")
    nav = await editor.get_by_role("navigation", name="Main").inner_text()
    assert "Connections" not in nav
    refused = await editor.goto(f"{live}/connections")
    assert refused is not None
    assert refused.status == 403
    assert "this needs the admin role" in await editor.locator("main").inner_text()
    await editor.context.close()
    admin = await signed_in(browser, live, "admin")  # the positive control
    assert "Connections" in await admin.get_by_role("navigation", name="Main").inner_text()
    shown = await admin.goto(f"{live}/connections")
    assert shown is not None
    assert shown.status == 200
    assert await admin.locator("h1").inner_text() == "Connections"
    assert "OAuth is off" in await admin.locator("#oauth-off").inner_text()  # KENNING_OAUTH unset
    await admin.context.close()
