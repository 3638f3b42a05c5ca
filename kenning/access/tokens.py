"""Scoped bearer tokens (docs/mcp-server.md): create, list, revoke, verify.

Scopes are ordered: ``read`` < ``write`` < ``admin``; a token grants its own scope and every lower
one. Secrets are 256 random bits shown once at creation; the store keeps only their sha256.

A token may also name a tool profile (``PROFILES``, docs/mcp-tools.md): what the MCP server shows
it, never what it may do (the scope decides that). A token without one gets the server's default
(``KENNING_MCP_PROFILE``), so tokens created before profiles existed read as that default.
"""

from __future__ import annotations

import hashlib
import json
import re
import secrets
from dataclasses import dataclass
from typing import Any

from kenning.access import sealed
from kenning.core import validation
from kenning.core.clock import Clock
from kenning.core.errors import Conflict, InvalidInput, NotFound
from kenning.store import AuditEvent, Store, TokenRecord

SCOPES: tuple[str, ...] = ("read", "write", "admin")
# which tools a profile shows is the MCP server's (mcp_server/profiles.py); the names live here so
# a token record, an OAuth grant and a setting can be checked without the door
PROFILES: tuple[str, ...] = ("agent", "curator", "all")
PENDING_SECONDS = 30.0  # how long a create in progress holds its idempotency key
SECRET_PREFIX = "kn_"  # noqa: S105 - a marker, not a secret
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")
NAME_RULE = "1-64 characters: letters, digits, '.', '_', '@', '-', starting with a letter or digit"
# The name is the audit actor, so it may not pass for one of Kenning's own actors
# (the others carry a ':').
RESERVED_NAMES = frozenset(
    {"local", "anonymous", "unknown", "maintenance", "system", "worker", "kenning"}
)


def grants(scope: str) -> frozenset[str]:
    """Every scope a token of ``scope`` holds (admin holds write and read)."""
    if scope not in SCOPES:
        return frozenset()
    return frozenset(SCOPES[: SCOPES.index(scope) + 1])


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def check_scope(scope: str) -> str:
    if scope not in SCOPES:
        raise InvalidInput(f"unknown scope {scope!r}", hint=f"use one of {', '.join(SCOPES)}")
    return scope


def check_profile(profile: str) -> str:
    """A profile name, or InvalidInput listing the valid ones."""
    if profile not in PROFILES:
        raise InvalidInput(
            f"unknown profile {str(profile)[:40]!r}", hint=f"use one of {', '.join(PROFILES)}"
        )
    return profile


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise InvalidInput(f"token name {name!r} is not allowed", hint=NAME_RULE)
    if name.lower() in RESERVED_NAMES:
        raise InvalidInput(
            f"token name {name!r} is reserved: it would pass for Kenning's "
            "own actor in the audit log",
            hint="name the client or person, e.g. laptop-claude",
        )
    return name


@dataclass(frozen=True)
class Token:
    """A token as shown to people: never the secret or its digest."""

    name: str
    scope: str
    created_at: float
    created_by: str
    profile: str | None = None  # None: the server's default profile


@dataclass(frozen=True)
class Minted:
    """A token and its secret from ``create_once``; ``replayed``: the first call's, again."""

    token: Token
    secret: str
    replayed: bool


def _public(record: TokenRecord) -> Token:
    return Token(
        record.name, record.scope, record.created_at, record.created_by, record.profile or None
    )


class Tokens:
    """Needs only the store and a clock, so `kenning token` works without loading the model."""

    def __init__(self, store: Store, clock: Clock) -> None:
        self.clock = clock
        self.store = store.tokens
        self.replies = store.replies

    def _event(self, actor: str, action: str, details: dict[str, str]) -> AuditEvent:
        return AuditEvent(
            actor=actor or "unknown", action=action, key="", at=self.clock.now(), details=details
        )

    def create(
        self, name: str, scope: str, *, actor: str, profile: str | None = None
    ) -> tuple[Token, str]:
        """A new token and its secret (the only time the secret exists outside the caller);
        ``profile`` None leaves the choice to the server's default."""
        name, scope = check_name(name), check_scope(scope)
        profile = None if profile is None else check_profile(profile)
        secret = SECRET_PREFIX + secrets.token_urlsafe(32)
        record = TokenRecord(
            name=name,
            scope=scope,
            created_at=self.clock.now(),
            created_by=actor or "unknown",
            digest=digest(secret),
            profile=profile or "",
        )
        details = {"name": name, "scope": scope, **({"profile": profile} if profile else {})}
        if not self.store.add(record, [self._event(actor, "token_create", details)]):
            raise Conflict(
                f"a token named {name!r} exists", hint="revoke it first or choose another name"
            )
        return _public(record), secret

    def create_once(
        self,
        name: str,
        scope: str,
        *,
        actor: str,
        idempotency_key: str,
        profile: str | None = None,
    ) -> Minted:
        """``create`` at most once per (caller, idempotency key): a retry within
        ``sealed.WINDOW_SECONDS`` -- or a call while the first is running -- gets the same token
        and secret, kept sealed for that window only (kenning.access.sealed); the same key for
        another request is refused."""
        name, scope = check_name(name), check_scope(scope)
        profile = None if profile is None else check_profile(profile)
        key = validation.idempotency_key(idempotency_key, shortest=sealed.SHORTEST_KEY)
        seal, asked = sealed.Seal.of(key, actor or "unknown"), json.dumps([name, scope, profile])
        for _ in range(2):  # a second round when the call in progress failed and released it
            if self.replies.claim(seal.lookup, pending_seconds=PENDING_SECONDS):
                try:
                    token, secret = self.create(name, scope, actor=actor, profile=profile)
                except BaseException:
                    self.replies.release(seal.lookup)
                    raise
                reply = {"request": asked, "sealed": seal.close(secret, asked)}
                self.replies.keep(seal.lookup, reply, ttl_seconds=sealed.WINDOW_SECONDS)
                return Minted(token, secret, replayed=False)
            kept = self.replies.reply(seal.lookup, wait_seconds=PENDING_SECONDS)
            if kept is not None:
                return self._replayed(kept, seal, asked)
        raise Conflict(
            "a token create with this idempotency key is still in progress",
            hint="retry with the same key",
        )

    def _replayed(self, kept: dict[str, Any], seal: sealed.Seal, asked: str) -> Minted:
        opened = seal.open(str(kept.get("sealed", "")), asked) if kept["request"] == asked else None
        if opened is None:
            raise Conflict(
                "this idempotency key was used for a different token create request",
                hint="use a new idempotency key for each new token; nothing was done",
            )
        token = self.verify(opened)
        if token is None:
            raise Conflict(
                "the token created with this idempotency key was revoked since",
                hint="create a new token with a new idempotency key",
            )
        return Minted(token, opened, replayed=True)

    def all(self) -> list[Token]:
        return [_public(r) for r in self.store.all()]

    def revoke(self, name: str, *, actor: str) -> Token:
        record = self.store.remove(
            check_name(name),
            lambda found: [
                self._event(actor, "token_revoke", {"name": name, "scope": found.scope})
            ],
        )
        if record is None:
            raise NotFound(f"no token named {name!r}", hint="`kenning token list` shows the names")
        return _public(record)

    def verify(self, secret: str) -> Token | None:
        """The token a secret belongs to, or None. Raises BackendUnavailable
        when Valkey cannot answer."""
        if not secret or not secret.startswith(SECRET_PREFIX) or len(secret) > 200:
            return None
        record = self.store.by_digest(digest(secret))
        return None if record is None else _public(record)
