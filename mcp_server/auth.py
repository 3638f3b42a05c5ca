"""Who may connect, and from where (docs/mcp-server.md#security).

- Bearer tokens created with `kenning token create` are verified against their sha256 in Valkey.
  A verified token is remembered for ``CACHE_SECONDS`` so a session survives a Valkey blip and
  Valkey is not asked on every message; a revoked token stops working within that window. While Valkey
  is unreachable, a token verified in the last ``OUTAGE_GRACE_SECONDS`` is still accepted.
- The server refuses to listen on a non-loopback address without auth.
- Host and Origin headers are checked against the loopback names plus the public URL's host.
"""

from __future__ import annotations

import ipaddress
import time
from urllib.parse import urlsplit

import anyio.to_thread
from fastmcp.server.auth import AccessToken, TokenVerifier

from kenning.errors import BackendUnavailable, InvalidInput
from kenning.settings import Settings
from kenning.tokens import Token, Tokens, digest, grants

CACHE_SECONDS = 10.0
OUTAGE_GRACE_SECONDS = 300.0  # during a Valkey outage, a recently verified token still gets a clear outage error
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


class TokenAuth(TokenVerifier):
    """Verifies Kenning bearer tokens; the token name becomes the client id (the audit actor)."""

    def __init__(self, tokens: Tokens, *, base_url: str | None = None) -> None:
        super().__init__(base_url=base_url)
        self.tokens = tokens
        self._cache: dict[str, tuple[float, Token]] = {}

    async def verify_token(self, token: str) -> AccessToken | None:
        found = await self._lookup(token)
        if found is None:
            return None
        return AccessToken(token=token, client_id=found.name, scopes=sorted(grants(found.scope)),
                           expires_at=None, claims={"name": found.name, "scope": found.scope})

    async def _lookup(self, secret: str) -> Token | None:
        key = digest(secret)
        now = time.monotonic()
        cached = self._cache.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        try:
            found = await anyio.to_thread.run_sync(self.tokens.verify, secret)
        except BackendUnavailable:
            # Cannot check: a token verified shortly before still passes, so its caller is told "memory could
            # NOT be checked" by the tool instead of a misleading 401. Unknown tokens never pass.
            fresh = cached is not None and cached[0] + OUTAGE_GRACE_SECONDS > now
            return cached[1] if cached is not None and fresh else None
        if found is None:
            self._cache.pop(key, None)
            return None
        self._cache[key] = (now + CACHE_SECONDS, found)
        return found


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
            hint="set KENNING_MCP_AUTH=true (and create tokens), or bind KENNING_MCP_HOST=127.0.0.1")


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
    """The public URL's origin; loopback pages are accepted when the request itself is on loopback."""
    if not settings.mcp_public_url:
        return []
    parts = urlsplit(settings.mcp_public_url)
    return [f"{parts.scheme}://{parts.netloc}"] if parts.scheme and parts.netloc else []
