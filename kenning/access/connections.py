"""Who is connected: the OAuth clients that registered, the grants people gave them, when each was
last used, and revoking either (docs/dashboard.md#connections, `kenning oauth`).

"Last used" is written where tokens are issued -- a code redeemed, a refresh -- inside the unit
that issues them (``seen`` in kenning.store.oauth), not on every MCP call: a client that works
refreshes when its access token runs out, so the time is exact to within one access token's
lifetime (KENNING_OAUTH_ACCESS_TOKEN_MINUTES) and costs no write on the request path.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kenning.access.accounts import Accounts
from kenning.access.oauth import ClientInfo, GrantInfo, OAuth
from kenning.core import validation
from kenning.core.clock import Clock
from kenning.core.errors import NotFound
from kenning.core.models import iso
from kenning.core.settings import Settings
from kenning.store import AuditEvent, Store


@dataclass(frozen=True)
class Connection:
    """A registered client and when it last got tokens (None: never)."""

    client: ClientInfo
    last_used: float | None

    def public(self) -> dict[str, Any]:
        c = self.client
        return {
            "client_id": c.client_id,
            "name": c.name,
            "redirect_uris": list(c.redirect_uris),
            "auth_method": c.auth_method,
            "scope": c.scope,
            "registered_at": iso(c.created_at),
            "last_used": iso(self.last_used),
        }


@dataclass(frozen=True)
class Grant:
    """A person's consent to a client: when it was last refreshed (None: never) and how many of
    its token families are live (an ended family leaves the consent in place)."""

    grant: GrantInfo
    last_refresh: float | None
    live: int

    def public(self) -> dict[str, Any]:
        g = self.grant
        return {
            "client_id": g.client_id,
            "client_name": g.client_name,
            "username": g.username,
            "scopes": list(g.scopes),
            "issued_at": iso(g.granted_at),
            "last_refresh": iso(self.last_refresh),
            "live_token_families": self.live,
        }


@dataclass(frozen=True)
class Connected:
    clients: list[Connection]
    grants: list[Grant]

    def public(self) -> dict[str, Any]:
        return {
            "clients": [c.public() for c in self.clients],
            "grants": [g.public() for g in self.grants],
        }


class Connections:
    """The admin's view of OAuth: list, and revoke with a reason (audited, tokens end at once)."""

    def __init__(self, oauth: OAuth) -> None:
        self.oauth = oauth
        self.store = oauth.store

    @classmethod
    def build(
        cls, store: Store, clock: Clock, accounts: Accounts, settings: Settings
    ) -> Connections:
        """Over the same token lifetimes the MCP server's OAuth uses."""
        return cls(
            OAuth(
                store,
                clock,
                accounts,
                access_seconds=settings.oauth_access_token_minutes * 60,
                refresh_seconds=settings.oauth_refresh_token_days * 86400,
            )
        )

    def listing(self) -> Connected:
        seen = self.store.seen()
        clients = [Connection(c, seen.get(f"client:{c.client_id}")) for c in self.oauth.clients()]
        grants = [
            Grant(
                g,
                seen.get(f"grant:{g.client_id} {g.username}"),
                len(self._live_families(g.client_id, g.username)),
            )
            for g in self.oauth.grants()
        ]
        return Connected(clients, grants)

    def revoke_client(self, client_id: str, *, actor: str, reason: str | None) -> ClientInfo:
        """The client, its consents and every token it holds, gone at once."""
        why = validation.reason(reason, required=True) or ""
        return self.oauth.revoke_client(client_id, actor=actor, reason=why)

    def revoke_grant(
        self, client_id: str, username: str, *, actor: str, reason: str | None
    ) -> GrantInfo:
        """One person's consent to one client and every token it produced, gone at once; the
        client stays registered (the person may connect it again, with a new consent)."""
        why = validation.reason(reason, required=True) or ""
        grant = next(
            (g for g in self.oauth.grants() if (g.client_id, g.username) == (client_id, username)),
            None,
        )
        if grant is None:
            raise NotFound(
                f"{username!r} granted nothing to the OAuth client {client_id!r}",
                hint="`kenning oauth grants` lists the grants",
            )
        families = self._families(client_id, username)
        event = AuditEvent(
            actor=actor,
            action="oauth_grant_revoke",
            key="",
            reason=why,
            at=self.oauth.clock.now(),
            details={
                "client_id": client_id,
                "client_name": grant.client_name,
                "username": username,
                "families": len(families),
            },
        )
        ops = [op for family in families for op in self.oauth.revoking(family)]
        self.store.commit([event], [*ops, *self.store.dropping_grant(client_id, username)])
        return grant

    def _families(self, client_id: str, username: str) -> dict[str, dict[str, Any]]:
        """The token families (id -> record) this person's consents to this client started and
        that have not expired; revoked ones included."""
        records = ((f, self.store.get("family", f)) for f in self.store.families_of(client_id))
        return {f: r for f, r in records if r is not None and r.get("username") == username}

    def _live_families(self, client_id: str, username: str) -> list[str]:
        families = self._families(client_id, username)
        return [f for f, record in families.items() if not record.get("revoked")]
