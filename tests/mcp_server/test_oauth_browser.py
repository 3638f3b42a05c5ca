"""The OAuth pages in a real Chromium, with nothing added by the test: a person opens the
authorization URL, logs in, allows, and the browser lands on the client's callback with a code that
buys tokens. The browser's own headers carry the page's origin (Referrer-Policy same-origin;
issue 30: under no-referrer every browser sent `Origin: null` and every login was refused).
Negatives: the same forms, with valid fields, sent from a page of another origin and with
`Origin: null`, are refused and change nothing; the person's own page then still works."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.async_api import Browser, BrowserContext, Page, Request

from kenning.core.settings import Settings
from kenning.engine import Engine
from mcp_server.oauth.pages import SESSION_COOKIE, origin_of
from tests.mcp_server.browser import (
    CONSENT_HEADING,
    LocalSite,
    chromium_context,
    connect,
    log_in,
    serving,
)
from tests.mcp_server.oauth_kit import PASSWORD, OAuthKit, pkce, start_oauth


@pytest.fixture
def kit(engine: Engine, settings: Settings) -> Iterator[OAuthKit]:
    started = start_oauth(engine, settings)
    yield started
    started.service.stop()


@pytest.fixture
def callback() -> Iterator[LocalSite]:
    with serving(LocalSite()) as site:
        yield site


def posts_to(context: BrowserContext, base: str) -> list[Request]:
    """Every POST the browser sends to ``base`` from now on."""
    sent: list[Request] = []
    context.on(
        "request",
        lambda r: sent.append(r) if r.method == "POST" and r.url.startswith(base) else None,
    )
    return sent


async def test_a_person_connects_in_chromium_and_the_code_buys_tokens(
    browser: Browser,
    kit: OAuthKit,
    callback: LocalSite,
) -> None:
    client = await kit.register(
        client_name="Chromium test client",
        redirect_uris=[f"{callback.url}/callback"],
        token_endpoint_auth_method="none",
    )
    verifier, challenge = pkce()
    async with chromium_context(browser) as context:
        sent = posts_to(context, kit.base)
        landed = await connect(context, kit.authorize_url(client, challenge), callback)
        origins = {r.url.removeprefix(kit.base): await r.header_value("origin") for r in sent}
        cookies = await context.cookies(kit.base)
    assert landed.query["state"] == "st-1"
    # the browser's own Origin on both forms: the page's, never null
    assert origins == {"/oauth/login": kit.base, "/oauth/consent": kit.base}
    assert any(c["name"] == SESSION_COOKIE and c["httpOnly"] for c in cookies)
    reply = await kit.token(client, landed.query["code"], verifier)
    assert reply.status_code == 200, reply.text
    assert set(reply.json()["scope"].split()) == {"read", "write", "offline_access"}
    assert await kit.mcp_status(reply.json()["access_token"]) == 200


async def test_the_pages_send_same_origin_and_no_referer_leaves_for_the_client(
    browser: Browser,
    kit: OAuthKit,
    callback: LocalSite,
) -> None:
    client = await kit.register(
        redirect_uris=[f"{callback.url}/callback"], token_endpoint_auth_method="none"
    )
    async with chromium_context(browser) as context:
        page = await context.new_page()
        shown = await page.goto(kit.authorize_url(client, pkce()[1]))
        assert shown is not None
        assert await shown.header_value("referrer-policy") == "same-origin"
        await page.close()
        landed = await connect(context, kit.authorize_url(client, pkce()[1]), callback)
    # the consent page's URL (and its request id) stays on Kenning's origin
    assert "referer" not in {name.lower() for name in landed.headers}


def attacker(fields: dict[str, str], action: str) -> str:
    """Another site's page that sends the OAuth form with ``fields`` (valid ones, read by the
    attacker from a page of their own) when its button is pressed."""
    inputs = "".join(f'<input type="hidden" name="{k}" value="{v}">' for k, v in fields.items())
    return f'<form method="post" action="{action}">{inputs}<button>Win a prize</button></form>'


async def send_from(
    context: BrowserContext, site: LocalSite, fields: dict[str, str], action: str
) -> tuple[int, str | None, str]:
    """Press the attacker page's button; the answer's status, the Origin the browser sent, and the
    text the person then sees."""
    site.pages["/"] = (attacker(fields, action), site.pages.get("/", ("", {}))[1])
    page = await context.new_page()
    await page.goto(f"{site.url}/")
    async with page.expect_response(action) as answered:
        await page.get_by_role("button", name="Win a prize").click()
    response = await answered.value
    origin = await response.request.header_value("origin")
    text = await page.locator("body").inner_text()
    await page.close()
    return response.status, origin, text


async def fields_of(page: Page) -> dict[str, str]:
    return {
        name: await page.locator(f"input[name={name}]").input_value()
        for name in ("request", "csrf")
    }


# another site (localhost is not 127.0.0.1 to a browser), and the same with no-referrer: null
ELSEWHERE = [
    pytest.param({}, "http://localhost:{port}", id="cross-site"),
    pytest.param({"Referrer-Policy": "no-referrer"}, "null", id="origin-null"),
]


@pytest.mark.parametrize(("headers", "origin"), ELSEWHERE)
async def test_a_login_form_sent_from_elsewhere_is_refused(
    browser: Browser,
    kit: OAuthKit,
    callback: LocalSite,
    headers: dict[str, str],
    origin: str,
) -> None:
    client = await kit.register(
        redirect_uris=[f"{callback.url}/callback"], token_endpoint_auth_method="none"
    )
    with serving(LocalSite({"/": ("", headers)}, host="localhost")) as site:
        async with chromium_context(browser) as context:
            own = await context.new_page()
            await own.goto(kit.authorize_url(client, pkce()[1]))
            fields = {**await fields_of(own), "username": "alice", "password": PASSWORD}
            status, sent, text = await send_from(context, site, fields, f"{kit.base}/oauth/login")
            assert sent == origin.format(port=site.port)
            assert status == 403
            assert "nothing was done" in text or "Forbidden Origin" in text
            assert not [c for c in await context.cookies(kit.base) if c["name"] == SESSION_COOKIE]
            # positive control: the same request, logged in on Kenning's own page
            await log_in(own)
            await own.wait_for_selector(f"h1:has-text('{CONSENT_HEADING}')")


@pytest.mark.parametrize(("headers", "origin"), ELSEWHERE)
async def test_a_consent_form_sent_from_elsewhere_grants_nothing(
    browser: Browser,
    kit: OAuthKit,
    callback: LocalSite,
    headers: dict[str, str],
    origin: str,
) -> None:
    client = await kit.register(
        redirect_uris=[f"{callback.url}/callback"], token_endpoint_auth_method="none"
    )
    with serving(LocalSite({"/": ("", headers)}, host="localhost")) as site:
        async with chromium_context(browser) as context:
            own = await context.new_page()
            await own.goto(kit.authorize_url(client, pkce()[1]))
            await log_in(own)
            await own.wait_for_selector(f"h1:has-text('{CONSENT_HEADING}')")
            fields = {**await fields_of(own), "action": "approve", "scope": "write"}
            status, sent, _ = await send_from(context, site, fields, f"{kit.base}/oauth/consent")
            assert sent == origin.format(port=site.port)
            assert status == 403
            assert callback.hits == []  # no code went anywhere
            # positive control: the person allows on Kenning's own page
            await own.get_by_role("button", name="Allow").click()
            assert "code" in (await callback.wait("/callback")).query


@pytest.mark.parametrize(
    ("url", "origin"),
    [
        ("https://Kenning.Example.com", "https://kenning.example.com"),
        ("https://kenning.example.com:443/kenning", "https://kenning.example.com"),
        ("http://127.0.0.1:8765", "http://127.0.0.1:8765"),
        ("http://[::1]:80", "http://[::1]"),
    ],
)
def test_the_origin_a_browser_writes_for_the_public_url(url: str, origin: str) -> None:
    assert origin_of(url) == origin
