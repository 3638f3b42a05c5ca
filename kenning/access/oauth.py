"""Kenning's OAuth 2.1 authorization server, the engine half (docs/remote-access.md).

State lives in Valkey (kenning.store.oauth), so restarts and replicas share it; the HTTP half is
mcp_server.oauth. Codes and tokens are random 256-bit strings handed out once and stored as sha256.
A *family* is one consent's chain of tokens: each refresh rotates the refresh token inside it; a
rotated refresh token presented again after ``REFRESH_GRACE_SECONDS`` (or a replayed code) revokes
the whole family. Scopes are the bearer tokens' (read < write < admin) plus ``offline_access``.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import Any

from kenning.access.accounts import Accounts, role_scope
from kenning.access.oauth_rules import OFFLINE, PROFILE_SCOPES, expand
from kenning.access.tokens import SCOPES, grants
from kenning.core.clock import Clock
from kenning.core.errors import InvalidInput, NotFound, PermissionDenied, RateLimited
from kenning.store import AuditEvent, Op, Store

CODE_SECONDS = 120
REQUEST_SECONDS = 600
REFRESH_GRACE_SECONDS = 30
REGISTRATION_WINDOW_SECONDS = 3600
ACCESS_PREFIX, REFRESH_PREFIX, CODE_PREFIX = "kna_", "knr_", "knc_"


def digest(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def actor_of(username: str) -> str:
    """The audit actor of a person acting through OAuth (a ':' keeps it apart
    from bearer token names)."""
    return f"user:{username}"


@dataclass(frozen=True)
class ClientInfo:
    client_id: str
    name: str
    redirect_uris: tuple[str, ...]
    scope: str
    auth_method: str
    grant_types: tuple[str, ...]
    created_at: float
    secret_digest: str
    metadata: dict[str, Any]


@dataclass(frozen=True)
class AuthRequest:
    """An /authorize request waiting for the person's login and consent."""

    id: str
    client_id: str
    redirect_uri: str
    redirect_explicit: bool
    scopes: tuple[str, ...]
    state: str | None
    code_challenge: str
    resource: str
    csrf: str


@dataclass(frozen=True)
class CodeGrant:
    client_id: str
    username: str
    scopes: tuple[str, ...]
    redirect_uri: str
    redirect_explicit: bool
    code_challenge: str
    resource: str
    expires_at: float


@dataclass(frozen=True)
class TokenInfo:
    client_id: str
    username: str
    scopes: tuple[str, ...]
    resource: str
    family: str
    expires_at: float


@dataclass(frozen=True)
class Issued:
    access_token: str
    refresh_token: str | None
    expires_in: int
    scopes: tuple[str, ...]


@dataclass(frozen=True)
class GrantInfo:
    client_id: str
    client_name: str
    username: str
    scopes: tuple[str, ...]
    granted_at: float


def _client(record: dict[str, Any]) -> ClientInfo:
    return ClientInfo(
        client_id=record["client_id"],
        name=record.get("name", ""),
        redirect_uris=tuple(record.get("redirect_uris", ())),
        scope=record.get("scope", ""),
        auth_method=record.get("auth_method", "none"),
        grant_types=tuple(record.get("grant_types", ())),
        created_at=record.get("created_at", 0.0),
        secret_digest=record.get("secret_digest", ""),
        metadata=record.get("metadata", {}),
    )


def _token(record: dict[str, Any]) -> TokenInfo:
    return TokenInfo(
        client_id=record["client_id"],
        username=record["username"],
        scopes=tuple(record["scopes"]),
        resource=record["resource"],
        family=record["family"],
        expires_at=record["expires_at"],
    )


class OAuth:
    """Needs only the store, a clock and the accounts (no model), so the CLI can list and revoke."""

    def __init__(
        self,
        store: Store,
        clock: Clock,
        accounts: Accounts,
        *,
        access_seconds: int = 3600,
        refresh_seconds: int = 30 * 86400,
    ) -> None:
        self.audit_log = store
        self.clock = clock
        self.accounts = accounts
        self.store = store.oauth
        self.throttle = store.throttle
        self.access_seconds = access_seconds
        self.refresh_seconds = refresh_seconds

    def _event(
        self, actor: str, action: str, details: dict[str, Any], *, reason: str = ""
    ) -> AuditEvent:
        return AuditEvent(
            actor=actor, action=action, key="", reason=reason, at=self.clock.now(), details=details
        )

    def _audit(self, actor: str, action: str, details: dict[str, Any]) -> None:
        """An event with no write of its own (a refused registration flood)."""
        self.audit_log.record([self._event(actor, action, details)])

    # --- clients ---------------------------------------------------------------------------------

    def check_registration_rate(self, ip: str, limit: int) -> None:
        """Count one registration attempt from ``ip``; RateLimited past ``limit`` in the hour."""
        count = self.throttle.hit(
            "oauth-register", ip, now=self.clock.now(), window_seconds=REGISTRATION_WINDOW_SECONDS
        )
        if count > limit:
            if count == limit + 1:  # one event per flood, not one per request
                self._audit(f"ip:{ip}", "oauth_register_throttled", {"ip": ip, "limit": limit})
            raise RateLimited(
                f"too many client registrations from {ip}", hint="try again within the hour"
            )

    def register(self, client: ClientInfo, *, ip: str) -> ClientInfo:
        record = {
            "client_id": client.client_id,
            "name": client.name,
            "redirect_uris": list(client.redirect_uris),
            "scope": client.scope,
            "auth_method": client.auth_method,
            "grant_types": list(client.grant_types),
            "created_at": client.created_at,
            "secret_digest": client.secret_digest,
            "metadata": client.metadata,
        }
        self.store.commit(
            [
                self._event(
                    f"ip:{ip}",
                    "oauth_register",
                    {
                        "client_id": client.client_id,
                        "client_name": client.name,
                        "redirect_uris": list(client.redirect_uris),
                    },
                )
            ],
            self.store.adding_client(client.client_id, record),
        )
        return client

    def client(self, client_id: str) -> ClientInfo | None:
        if not client_id or len(client_id) > 100:
            return None
        record = self.store.get("client", client_id)
        return None if record is None else _client(record)

    def clients(self) -> list[ClientInfo]:
        found = (self.client(c) for c in self.store.client_ids())
        return sorted((c for c in found if c is not None), key=lambda c: c.created_at)

    def revoke_client(self, client_id: str, *, actor: str, reason: str = "") -> ClientInfo:
        """Delete a client, its consents and every token it holds; it must register again."""
        client = self.client(client_id)
        if client is None:
            raise NotFound(
                f"no OAuth client {client_id!r}", hint="`kenning oauth clients` lists them"
            )
        families = self.store.families_of(client_id)
        ops = [op for family in families for op in self.revoking(family)]
        self.store.commit(
            [
                self._event(
                    actor,
                    "oauth_client_revoke",
                    {"client_id": client_id, "client_name": client.name, "families": len(families)},
                    reason=reason,
                )
            ],
            [*ops, *self.store.dropping_client(client_id)],
        )
        return client

    # --- authorization (login and consent) --------------------------------------------------------

    def begin(
        self,
        client_id: str,
        redirect_uri: str,
        redirect_explicit: bool,
        scopes: list[str],
        state: str | None,
        code_challenge: str,
        resource: str,
    ) -> AuthRequest:
        """Park an /authorize request until the person has logged in and consented."""
        request = AuthRequest(
            id=secrets.token_urlsafe(24),
            client_id=client_id,
            redirect_uri=redirect_uri,
            redirect_explicit=redirect_explicit,
            scopes=tuple(expand(scopes)),
            state=state,
            code_challenge=code_challenge,
            resource=resource,
            csrf=secrets.token_urlsafe(24),
        )
        self.store.put(
            "request",
            request.id,
            {**request.__dict__, "scopes": list(request.scopes)},
            ttl=REQUEST_SECONDS,
        )
        return request

    def pending(self, request_id: str) -> AuthRequest | None:
        if not request_id or len(request_id) > 100:
            return None
        record = self.store.get("request", request_id)
        if record is None:
            return None
        return AuthRequest(**{**record, "scopes": tuple(record["scopes"])})

    def grantable(self, request: AuthRequest, role: str) -> tuple[str, ...]:
        """The requested scopes a person of ``role`` may grant (the role caps them)."""
        allowed = grants(role_scope(role)) | {OFFLINE, *PROFILE_SCOPES}
        return tuple(s for s in request.scopes if s in allowed)

    def approve(self, request_id: str, username: str, chosen: list[str]) -> tuple[str, AuthRequest]:
        """The person consents to ``chosen`` (a subset of what was asked and
        their role allows): a code."""
        request = self.pending(request_id)
        if request is None:
            raise _answered()
        account = self.accounts.get(username)
        if account is None or account.disabled:
            raise PermissionDenied(
                f"account {username!r} cannot grant access", hint="it is missing or disabled"
            )
        allowed = self.grantable(request, account.role)
        granted = [s for s in expand([s for s in chosen if s in allowed]) if s in allowed]
        if not set(granted) & set(SCOPES):
            raise InvalidInput(
                "grant at least one of the scopes read, write, admin", hint="or deny the request"
            )
        code = CODE_PREFIX + secrets.token_urlsafe(32)
        now = self.clock.now()
        grant = CodeGrant(
            client_id=request.client_id,
            username=account.username,
            scopes=tuple(granted),
            redirect_uri=request.redirect_uri,
            redirect_explicit=request.redirect_explicit,
            code_challenge=request.code_challenge,
            resource=request.resource,
            expires_at=now + CODE_SECONDS,
        )
        ops = [
            *self.store.putting(
                "code", digest(code), {**grant.__dict__, "scopes": granted}, ttl=CODE_SECONDS
            ),
            *self.store.granting(
                request.client_id, account.username, {"scopes": granted, "at": now}
            ),
        ]
        self._answer(
            request_id,
            self._event(
                actor_of(account.username),
                "oauth_grant",
                {"client_id": request.client_id, "scopes": granted, "asked": list(request.scopes)},
            ),
            ops,
        )
        return code, request

    def deny(self, request_id: str, username: str) -> AuthRequest:
        request = self.pending(request_id)
        if request is None:
            raise _answered()
        self._answer(
            request_id,
            self._event(actor_of(username), "oauth_deny", {"client_id": request.client_id}),
            [],
        )
        return request

    def _answer(self, request_id: str, event: AuditEvent, ops: list[Op]) -> None:
        """Delete the pending request, write ``ops`` and record ``event``, one unit: answered
        once (of two concurrent answers one wins; the other writes nothing)."""
        if not self.store.commit([event], ops, answering=request_id):
            raise _answered()

    # --- codes and tokens -------------------------------------------------------------------------

    def code(self, code: str) -> CodeGrant | None:
        """The live grant behind a code (None when unknown or expired). A code presented after it
        was redeemed revokes the tokens it produced (RFC 6749 §4.1.2)."""
        if not code.startswith(CODE_PREFIX) or len(code) > 200:
            return None
        record = self.store.get("code", digest(code))
        if record is None:
            used = self.store.get("code-used", digest(code))
            if used is not None:
                self._reuse(used["family"], used["client_id"], "code")
            return None
        grant = CodeGrant(**{**record, "scopes": tuple(record["scopes"])})
        return grant if grant.expires_at > self.clock.now() else None

    def redeem(self, code: str, *, refresh: bool) -> Issued | None:
        """Consume a code (atomically: of two concurrent redemptions one
        wins) and start a family; none for a code whose consent was revoked since."""
        record = self.store.take("code", digest(code))
        if record is None or record["expires_at"] <= self.clock.now():
            return None
        if not self.store.granted(record["client_id"], record["username"]):
            return None
        family = secrets.token_urlsafe(16)
        now = self.clock.now()
        ops = [
            *self.store.putting(
                "family",
                family,
                {
                    "client_id": record["client_id"],
                    "username": record["username"],
                    "scopes": record["scopes"],
                    "resource": record["resource"],
                    "created_at": now,
                    "revoked": False,
                },
                ttl=self.refresh_seconds,
            ),
            *self.store.linking(record["client_id"], family),
            *self.store.putting(
                "code-used",
                digest(code),
                {"family": family, "client_id": record["client_id"]},
                ttl=REQUEST_SECONDS,
            ),
            *self.store.seeing(record["client_id"], record["username"], now, refreshed=False),
        ]
        issued, tokens = self._issue(family, record, tuple(record["scopes"]), refresh=refresh)
        self.store.commit(
            [
                self._event(
                    actor_of(record["username"]),
                    "oauth_token",
                    {
                        "client_id": record["client_id"],
                        "scopes": record["scopes"],
                        "refresh": refresh,
                    },
                )
            ],
            [*ops, *tokens],
        )
        return issued

    def _issue(
        self, family: str, owner: dict[str, Any], scopes: tuple[str, ...], *, refresh: bool
    ) -> tuple[Issued, list[Op]]:
        """New tokens of ``family`` and the ops that store them (for the unit that records them)."""
        now = self.clock.now()
        base = {
            "client_id": owner["client_id"],
            "username": owner["username"],
            "scopes": list(scopes),
            "resource": owner["resource"],
            "family": family,
        }
        access = ACCESS_PREFIX + secrets.token_urlsafe(32)
        ops = self.store.putting(
            "access",
            digest(access),
            {**base, "expires_at": now + self.access_seconds},
            ttl=self.access_seconds,
            family=family,
        )
        refresh_token = REFRESH_PREFIX + secrets.token_urlsafe(32) if refresh else None
        if refresh_token is not None:
            ops += self.store.putting(
                "refresh",
                digest(refresh_token),
                {**base, "expires_at": now + self.refresh_seconds},
                ttl=self.refresh_seconds,
                family=family,
            )
        return Issued(access, refresh_token, self.access_seconds, scopes), ops

    def _live(self, kind: str, token: str) -> TokenInfo | None:
        record = self.store.get(kind, digest(token))
        if record is None or record["expires_at"] <= self.clock.now():
            return None
        family = self.store.get("family", record["family"])
        if family is None or family.get("revoked"):
            return None
        account = self.accounts.get(record["username"])
        if account is None or account.disabled:
            return None
        return _token(record)

    def access(self, token: str) -> TokenInfo | None:
        """The live access token (None when unknown, expired, revoked, or
        its account is disabled)."""
        if not token.startswith(ACCESS_PREFIX) or len(token) > 200:
            return None
        return self._live("access", token)

    def refresh_token(self, token: str) -> TokenInfo | None:
        """The live refresh token; a rotated one replayed after the grace
        window revokes its family."""
        if not token.startswith(REFRESH_PREFIX) or len(token) > 200:
            return None
        info = self._live("refresh", token)
        if info is None:
            return None
        rotated = self.store.get("rotated", digest(token))
        if rotated is not None and self.clock.now() - rotated["at"] > REFRESH_GRACE_SECONDS:
            self._reuse(info.family, info.client_id, "refresh_token")
            return None
        return info

    def rotate(self, token: str, scopes: list[str]) -> Issued | None:
        """A new access and refresh token for a live refresh token; the old one is spent (a
        concurrent refresh within the grace window gets its own pair in the same family)."""
        info = self.refresh_token(token)
        if info is None:
            return None
        if not self.store.claim(
            "rotated", digest(token), {"at": self.clock.now()}, ttl=self.refresh_seconds
        ):
            rotated = self.store.get("rotated", digest(token))
            if rotated is None or self.clock.now() - rotated["at"] > REFRESH_GRACE_SECONDS:
                self._reuse(info.family, info.client_id, "refresh_token")
                return None
        narrowed = tuple(s for s in expand(scopes) if s in info.scopes) or info.scopes
        family = self.store.get("family", info.family)
        if family is None:
            return None
        issued, tokens = self._issue(
            info.family, {**family, "client_id": info.client_id}, narrowed, refresh=True
        )
        self.store.commit(
            [
                self._event(
                    actor_of(info.username),
                    "oauth_refresh",
                    {"client_id": info.client_id, "scopes": list(narrowed)},
                )
            ],
            [
                *self.store.putting("family", info.family, family, ttl=self.refresh_seconds),
                *tokens,
                *self.store.seeing(info.client_id, info.username, self.clock.now(), refreshed=True),
            ],
        )
        return issued

    def revoke(self, info: TokenInfo, *, reason: str = "revoked by the client") -> None:
        """RFC 7009: revoking either token of a family ends the whole family."""
        self.store.commit(
            [
                self._event(
                    actor_of(info.username),
                    "oauth_revoke",
                    {"client_id": info.client_id, "reason": reason},
                )
            ],
            self.revoking(info.family),
        )

    def _reuse(self, family: str, client_id: str, what: str) -> None:
        ops = self.revoking(family)
        if ops:
            self.store.commit(
                [
                    self._event(
                        f"client:{client_id}",
                        "oauth_reuse_detected",
                        {"client_id": client_id, "replayed": what, "family": family},
                    )
                ],
                ops,
            )

    def revoking(self, family: str) -> list[Op]:
        """The ops that mark the family revoked and delete its tokens; none when it already was."""
        record = self.store.get("family", family)
        if record is None or record.get("revoked"):
            return []
        return self.store.revoking(family, record, ttl=self.refresh_seconds)

    def grants(self) -> list[GrantInfo]:
        out = []
        for (client_id, username), record in sorted(self.store.grants().items()):
            client = self.client(client_id)
            out.append(
                GrantInfo(
                    client_id,
                    client.name if client else "(deleted)",
                    username,
                    tuple(record.get("scopes", ())),
                    float(record.get("at", 0.0)),
                )
            )
        return out


def _answered() -> NotFound:
    return NotFound(
        "this authorization request has expired or was already answered",
        hint="start the connection again from your MCP client",
    )
