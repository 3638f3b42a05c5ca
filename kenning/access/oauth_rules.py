"""The pure rules of Kenning's OAuth server (docs/remote-access.md): scopes,
redirect URIs, resources.

No I/O here: kenning.access.oauth applies these to stored state, mcp_server.oauth to HTTP requests.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import urlsplit

from kenning.access.tokens import PROFILES, SCOPES
from kenning.core.errors import InvalidInput

OFFLINE = "offline_access"
SCOPES_SUPPORTED: tuple[str, ...] = (*SCOPES, OFFLINE)
# A grant may name the tool profile its client is shown (mcp_server/profiles.py) as a scope-like
# ``profile:NAME``: it grants nothing, so the person's role never limits it.
PROFILE_SCOPES: tuple[str, ...] = tuple(f"profile:{p}" for p in PROFILES)
# a client that asks for nothing (claude.ai)
DEFAULT_SCOPES: tuple[str, ...] = ("read", "write", OFFLINE)
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "[::1]", "::1"})
_SCHEME_RE = re.compile(r"^[a-z][a-z0-9+.-]{1,63}$")
_FORBIDDEN_SCHEMES = frozenset(
    {"javascript", "data", "file", "vbscript", "about", "blob", "ws", "wss", "ftp"}
)
MAX_REDIRECT_URIS = 10
MAX_URI_LENGTH = 2000


def parse_scopes(raw: str | None) -> list[str] | None:
    """A scope parameter as a list (None when absent or blank). Stray spaces, tabs and duplicates
    are tolerated; an unknown scope is InvalidInput."""
    if raw is None or not raw.strip():
        return None
    out: list[str] = []
    for scope in raw.split():
        if scope not in SCOPES_SUPPORTED + PROFILE_SCOPES:
            raise InvalidInput(
                f"unknown scope {scope[:40]!r}",
                hint=f"use {', '.join(SCOPES_SUPPORTED + PROFILE_SCOPES)}",
            )
        if scope not in out:
            out.append(scope)
    if len([s for s in out if s in PROFILE_SCOPES]) > 1:
        raise InvalidInput("more than one profile asked for", hint="ask for one profile:NAME")
    return out


def expand(scopes: list[str] | tuple[str, ...] | set[str]) -> list[str]:
    """Scopes with every implied lower scope (write holds read, admin holds
    both), in canonical order, and at most one ``profile:NAME``."""
    held = set(scopes)
    for i, scope in enumerate(SCOPES):
        if scope in held:
            held.update(SCOPES[:i])
    profile = [s for s in PROFILE_SCOPES if s in held][:1]  # a profile:NAME rides along
    return [s for s in SCOPES_SUPPORTED if s in held] + profile


def is_loopback_host(host: str) -> bool:
    if host.lower() in LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_redirect_uri(uri: str) -> str:
    """A redirect URI a client may register: https anywhere, http only on loopback (RFC 8252
    §7.3), or a private-use scheme such as cursor:// (RFC 8252 §7.1); never a
    fragment or a script scheme."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI_LENGTH:
        raise InvalidInput(
            "a redirect URI must be 1-2000 characters", hint="e.g. http://127.0.0.1:PORT/callback"
        )
    parts = urlsplit(uri)
    scheme = parts.scheme.lower()
    if parts.fragment or "#" in uri:
        raise InvalidInput(
            f"redirect URI {uri[:80]!r} has a fragment", hint="RFC 6749 §3.1.2 forbids one"
        )
    if scheme == "https" and parts.hostname:
        return uri
    if scheme == "http":
        if parts.hostname and is_loopback_host(parts.hostname):
            return uri
        raise InvalidInput(
            f"redirect URI {uri[:80]!r} uses http on a non-loopback host",
            hint="use https, or http://127.0.0.1 / http://localhost for a local client",
        )
    if _SCHEME_RE.match(scheme) and scheme not in _FORBIDDEN_SCHEMES and len(uri) > len(scheme) + 3:
        return uri
    raise InvalidInput(
        f"redirect URI {uri[:80]!r} is not allowed",
        hint="https, loopback http, or an app's own scheme (e.g. cursor://...)",
    )


def redirect_matches(registered: str, requested: str) -> bool:
    """Exact match, except a loopback http redirect, which matches on any port (RFC 8252 §7.3:
    native clients such as Claude Code listen on an ephemeral port)."""
    if registered == requested:
        return True
    a, b = urlsplit(registered), urlsplit(requested)
    if (
        a.scheme != "http"
        or b.scheme != "http"
        or not a.hostname
        or not is_loopback_host(a.hostname)
    ):
        return False
    try:
        b.port  # noqa: B018 - a malformed port raises here
    except ValueError:
        return False
    return (a.hostname, a.path or "/", a.query) == (
        b.hostname,
        b.path or "/",
        b.query,
    ) and not b.fragment


def normalize_resource(url: str) -> str:
    """A resource indicator compared as a URL: case-insensitive scheme
    and host, no trailing slash."""
    parts = urlsplit(url.strip())
    path = parts.path.rstrip("/")
    query = f"?{parts.query}" if parts.query else ""
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{path}{query}"
