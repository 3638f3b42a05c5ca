"""Assembling the authorization server from the settings (docs/remote-access.md)."""

from __future__ import annotations

from urllib.parse import urlsplit

import anyio
from starlette.routing import Route

from kenning.access.accounts import Accounts
from kenning.access.oauth import OAuth
from kenning.access.oauth_rules import is_loopback_host
from kenning.access.sessions import Sessions
from kenning.core.clock import Clock
from kenning.core.errors import InvalidInput
from kenning.core.settings import Settings
from kenning.store import Store
from mcp_server.auth import TokenAuth
from mcp_server.oauth.pages import ConsentPages
from mcp_server.oauth.provider import KenningOAuthProvider
from mcp_server.oauth.routes import rebuild


class OAuthServer(KenningOAuthProvider):
    """The provider plus its routes: the SDK's (rebuilt) and the login and consent pages."""

    def __init__(
        self,
        oauth: OAuth,
        bearer: TokenAuth,
        settings: Settings,
        resource_path: str,
        *,
        accounts: Accounts,
        sessions: Sessions,
        limiter: anyio.CapacityLimiter | None = None,
    ) -> None:
        assert settings.mcp_public_url is not None  # check_public_url ran first
        super().__init__(oauth, bearer, settings.mcp_public_url, resource_path, limiter=limiter)
        self.settings = settings
        self.pages = ConsentPages(self, accounts, sessions)

    def get_routes(self, mcp_path: str | None = None) -> list[Route]:
        routes = rebuild(
            self,
            super().get_routes(mcp_path),
            key=self.settings.oauth_registration_key,
            per_hour=self.settings.oauth_registrations_per_hour,
        )
        return routes + self.pages.routes()


def check_public_url(settings: Settings) -> str:
    """The public URL OAuth needs: https, or http on loopback (local
    testing); no query or fragment."""
    url = settings.mcp_public_url
    if not settings.mcp_auth:
        raise InvalidInput(
            "KENNING_OAUTH needs KENNING_MCP_AUTH=true", hint="OAuth is a way to authenticate"
        )
    if not url:
        raise InvalidInput(
            "KENNING_OAUTH needs KENNING_MCP_PUBLIC_URL",
            hint="the https URL clients reach, e.g. https://kenning.example.com",
        )
    parts = urlsplit(url)
    local = parts.scheme == "http" and is_loopback_host(parts.hostname or "")
    if not ((parts.scheme == "https" and parts.hostname) or local) or parts.query or parts.fragment:
        raise InvalidInput(
            f"KENNING_MCP_PUBLIC_URL {url!r} cannot be an OAuth issuer",
            hint="use an https URL without query or fragment (http only on 127.0.0.1/localhost)",
        )
    return url


def build(
    store: Store,
    settings: Settings,
    bearer: TokenAuth,
    resource_path: str,
    *,
    clock: Clock,
    limiter: anyio.CapacityLimiter | None = None,
) -> OAuthServer:
    check_public_url(settings)
    accounts = Accounts(store, clock)
    oauth = OAuth(
        store,
        clock,
        accounts,
        access_seconds=settings.oauth_access_token_minutes * 60,
        refresh_seconds=settings.oauth_refresh_token_days * 86400,
    )
    return OAuthServer(
        oauth,
        bearer,
        settings,
        resource_path,
        accounts=accounts,
        sessions=Sessions(store, clock, accounts),
        limiter=limiter,
    )
