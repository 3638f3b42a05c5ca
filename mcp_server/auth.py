"""Who may connect, and from where (docs/mcp-server.md#security).

- Bearer tokens created with `kenning token create` are verified against their sha256 in Valkey (a
  lookup by digest: no secret is ever compared in Python, so there is no timing side channel to
  close). A verified token is remembered for ``CACHE_SECONDS`` so Valkey is not asked on every
  message; a revoked token stops working within that window.
- While Valkey cannot answer, a token verified in the last ``OUTAGE_GRACE_SECONDS`` is let through
  the HTTP layer marked *unverified*, only so that its caller reads "memory could NOT be checked"
  instead of a misleading 401: ``ScopeGuard`` refuses every tool call of an unverified token, so a
  token revoked meanwhile can never run anything, however the outage (or a pool blip) looks.
- The server refuses to listen on a non-loopback address without auth.
- Host and Origin headers are checked against the loopback names plus the public URL's host.
"""

from __future__ import annotations

import ipaddress
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import anyio.to_thread
from fastmcp.server.auth import AccessToken, TokenVerifier

from kenning.access.tokens import Token, Tokens, digest, grants
from kenning.core.errors import BackendUnavailable, InvalidInput
from kenning.core.settings import Settings

CACHE_SECONDS = 10.0
OUTAGE_GRACE_SECONDS = 300.0
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
# claim on a token accepted during an outage: no tool may run with it
UNVERIFIED = "kenning/unverified"
# the audit actor when it is not the client id (OAuth: the person, user:NAME)
ACTOR_CLAIM = "kenning/actor"
# the token's own tool profile (None: the server's default; mcp_server/profiles.py reads it)
PROFILE_CLAIM = "kenning/profile"


class TokenAuth(TokenVerifier):
    """Verifies Kenning bearer tokens; the token name becomes the client id (the audit actor).

    ``limiter`` bounds the threads that ask Valkey (share the engine's, so a burst of new sessions
    cannot exhaust the connection pool); ``clock`` is monotonic seconds (a
    parameter so tests can step it).
    """

    def __init__(
        self,
        tokens: Tokens,
        *,
        base_url: str | None = None,
        limiter: anyio.CapacityLimiter | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__(base_url=base_url)
        self.tokens = tokens
        self.limiter = limiter
        self.clock = clock
        self._verified: dict[str, tuple[float, Token]] = {}  # sha256 -> (verified at, token)

    async def verify_token(self, token: str) -> AccessToken | None:
        found, verified = await self._lookup(token)
        if found is None:
            return None
        scopes = sorted(grants(found.scope)) if verified else []
        return AccessToken(
            token=token,
            client_id=found.name,
            scopes=scopes,
            expires_at=None,
            claims={
                "name": found.name,
                "scope": found.scope,
                UNVERIFIED: not verified,
                PROFILE_CLAIM: found.profile,
            },
        )

    async def _lookup(self, secret: str) -> tuple[Token | None, bool]:
        """The token and whether Valkey vouched for it within ``CACHE_SECONDS``."""
        key = digest(secret)
        now = self.clock()
        seen = self._verified.get(key)
        if seen is not None and now - seen[0] < CACHE_SECONDS:
            return seen[1], True
        try:
            found = await anyio.to_thread.run_sync(self.tokens.verify, secret, limiter=self.limiter)
        except BackendUnavailable:
            if seen is not None and now - seen[0] < OUTAGE_GRACE_SECONDS:
                return seen[1], False  # let through to hear the outage; ScopeGuard runs nothing
            return None, False
        if found is None:
            self._verified.pop(key, None)
            return None, False
        self._verified[key] = (now, found)
        return found, True


def is_loopback(host: str) -> bool:
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(settings: Settings) -> None:
    """Refuse to serve a non-loopback address without auth."""
    if not settings.mcp_auth and not is_loopback(settings.mcp_host):
        raise InvalidInput(
            f"refusing to listen on {settings.mcp_host} without authentication",
            hint=(
                "set KENNING_MCP_AUTH=true (and create tokens), or bind KENNING_MCP_HOST=127.0.0.1"
            ),
        )


def allowed_hosts(settings: Settings) -> list[str]:
    """Loopback names, the bind address (when it is a specific one) and the public URL's host."""
    hosts = list(LOOPBACK_HOSTS)
    if settings.mcp_host not in ("0.0.0.0", "::", ""):
        hosts.append(settings.mcp_host)
    if settings.mcp_public_url:
        public = urlsplit(settings.mcp_public_url).hostname
        if public:
            hosts.append(public)
    return list(dict.fromkeys(hosts))


def allowed_origins(settings: Settings) -> list[str]:
    """The public URL's origin; loopback pages are accepted when the
    request itself is on loopback."""
    if not settings.mcp_public_url:
        return []
    parts = urlsplit(settings.mcp_public_url)
    return [f"{parts.scheme}://{parts.netloc}"] if parts.scheme and parts.netloc else []
