"""OAuth state at rest (docs/remote-access.md): clients, pending
authorizations, codes, tokens, grants.

Every secret (code, access token, refresh token, client secret) is keyed by its sha256, never
stored. Records are JSON strings under ``{prefix}oauth:``:

- ``client:{id}`` (no TTL) and the set ``clients``; ``client-families:{id}``:
  the client's token families;
- ``request:{id}``: a pending /authorize request while the person logs in and consents (TTL);
- ``code:{sha}``: an authorization code, consumed with GETDEL (single use, atomic across replicas);
  ``code-used:{sha}``: the family a consumed code started, so a replayed code revokes it;
- ``access:{sha}`` / ``refresh:{sha}``: tokens (TTL = lifetime); ``rotated:{sha}``: set once with NX
  when a refresh token is used, so exactly one concurrent refresh rotates it;
- ``family:{id}``: one authorization's grant (client, person, scopes, resource, revoked), and
  ``family-tokens:{id}``: the keys of its tokens, deleted together on revocation;
- the hash ``grants``: "{client_id} {username}" -> the scopes a person consented to;
- the hash ``seen``: "client:{client_id}" -> when it last got tokens (a code redeemed or a refresh)
  and "grant:{client_id} {username}" -> when that grant was last refreshed (epoch seconds), written
  in the unit that issues the tokens, so recording them costs no round trip of its own.

A change the audit stream records (a client registered or revoked, a consent, tokens issued, a
family revoked) is a list of ``Op``s (``putting``, ``granting``, ``revoking``, ``dropping``...)
committed with its events as one unit of work (``commit``; kenning.store.unit). The single-use
claims (GETDEL of a code, SET NX of a rotated refresh token) run before it on their own: a crash
between the claim and the unit spends the code or token and issues nothing,
and the client starts again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import valkey

from kenning.store.audit import AuditEvent
from kenning.store.client import call, text
from kenning.store.unit import Op, Unit, Units


class OAuthStore:
    def __init__(self, client: valkey.Valkey, prefix: str, units: Units | None = None) -> None:
        self.client = client
        self.base = f"{prefix}oauth:"
        self.units = units or Units(client, prefix)

    # --- audited changes: ops committed with their events -----------------------------------------
    def commit(
        self, events: Sequence[AuditEvent], ops: Sequence[Op], *, answering: str | None = None
    ) -> bool:
        """Write ``ops`` and record ``events``, one unit; with ``answering`` (a pending request's
        id) only while that request is still there, deleting it: False (nothing
        written) when it was answered."""
        unit = Unit(events)
        if answering is not None:
            unit.gate(self.key("request", answering)).delete(self.key("request", answering))
        return self.units.commit(unit.extend(ops)).applied

    def putting(
        self,
        kind: str,
        ident: str,
        record: dict[str, Any],
        *,
        ttl: int | None = None,
        family: str | None = None,
    ) -> list[Op]:
        """``put`` as ops (the refresh token, the longest-lived, goes last so
        its TTL is the family's)."""
        value = json.dumps(record, sort_keys=True)
        ops: list[Op] = [
            ("SET", self.key(kind, ident), (value,) if ttl is None else (value, "EX", ttl))
        ]
        if family is not None:
            members = self.key("family-tokens", family)
            ops.append(("SADD", members, (self.key(kind, ident),)))
            if ttl is not None:
                ops.append(("EXPIRE", members, (ttl,)))
        return ops

    def adding_client(self, client_id: str, record: dict[str, Any]) -> list[Op]:
        return [
            *self.putting("client", client_id, record),
            ("SADD", f"{self.base}clients", (client_id,)),
        ]

    def dropping_client(self, client_id: str) -> list[Op]:
        """The client, its family list, its set membership, its consents and when they were seen."""
        fields = tuple(f"{c} {u}" for c, u in self.grants() if c == client_id)
        return [
            ("HDEL", f"{self.base}grants", fields),
            ("HDEL", f"{self.base}seen", (f"client:{client_id}", *(f"grant:{f}" for f in fields))),
            ("DEL", self.key("client", client_id), ()),
            ("DEL", self.key("client-families", client_id), ()),
            ("SREM", f"{self.base}clients", (client_id,)),
        ]

    def dropping_grant(self, client_id: str, username: str) -> list[Op]:
        """One person's consent to one client, and when it was last refreshed."""
        field = f"{client_id} {username}"
        return [
            ("HDEL", f"{self.base}grants", (field,)),
            ("HDEL", f"{self.base}seen", (f"grant:{field}",)),
        ]

    def seeing(self, client_id: str, username: str, at: float, *, refreshed: bool) -> list[Op]:
        """The client got tokens at ``at``; with ``refreshed`` through a refresh of this grant."""
        pairs: tuple[str, ...] = (f"client:{client_id}", repr(at))
        if refreshed:
            pairs += (f"grant:{client_id} {username}", repr(at))
        return [("HSET", f"{self.base}seen", pairs)]

    def linking(self, client_id: str, family: str) -> list[Op]:
        return [("SADD", self.key("client-families", client_id), (family,))]

    def granting(self, client_id: str, username: str, record: dict[str, Any]) -> list[Op]:
        return [
            (
                "HSET",
                f"{self.base}grants",
                (f"{client_id} {username}", json.dumps(record, sort_keys=True)),
            )
        ]

    def revoking(self, family: str, record: dict[str, Any], *, ttl: int) -> list[Op]:
        """Mark the family revoked and delete its tokens (their keys read now: a token written
        after this read belongs to a revoked family, which no check accepts)."""
        members = self.key("family-tokens", family)
        tokens = [text(k) for k in call(self.client.smembers, members)]
        return [
            *self.putting("family", family, {**record, "revoked": True}, ttl=ttl),
            *(("DEL", key, ()) for key in [*tokens, members]),
        ]

    def key(self, kind: str, ident: str) -> str:
        return f"{self.base}{kind}:{ident}"

    def put(self, kind: str, ident: str, record: dict[str, Any], *, ttl: int | None = None) -> None:
        """Write one record no event records (a pending /authorize request)."""
        call(self.client.set, self.key(kind, ident), json.dumps(record, sort_keys=True), ex=ttl)

    def get(self, kind: str, ident: str) -> dict[str, Any] | None:
        return _load(call(self.client.get, self.key(kind, ident)))

    def take(self, kind: str, ident: str) -> dict[str, Any] | None:
        """Read and delete in one atomic step: of concurrent callers exactly one gets the record."""
        return _load(call(self.client.getdel, self.key(kind, ident)))

    def claim(self, kind: str, ident: str, record: dict[str, Any], *, ttl: int) -> bool:
        """Write only if absent (SET NX): True for the one caller that wrote it."""
        return bool(
            call(
                self.client.set,
                self.key(kind, ident),
                json.dumps(record, sort_keys=True),
                ex=ttl,
                nx=True,
            )
        )

    def client_ids(self) -> list[str]:
        return sorted(text(c) for c in call(self.client.smembers, f"{self.base}clients"))

    def families_of(self, client_id: str) -> list[str]:
        return sorted(
            text(f) for f in call(self.client.smembers, self.key("client-families", client_id))
        )

    def grants(self) -> dict[tuple[str, str], dict[str, Any]]:
        raw: Any = call(self.client.hgetall, f"{self.base}grants")
        out: dict[tuple[str, str], dict[str, Any]] = {}
        for field, value in raw.items():
            client_id, _, username = text(field).partition(" ")
            out[(client_id, username)] = json.loads(text(value))
        return out

    def granted(self, client_id: str, username: str) -> bool:
        """Whether this person's consent to this client stands (it was not revoked)."""
        return bool(call(self.client.hexists, f"{self.base}grants", f"{client_id} {username}"))

    def seen(self) -> dict[str, float]:
        """When each client last got tokens and each grant was last refreshed (see the module)."""
        raw: Any = call(self.client.hgetall, f"{self.base}seen")
        return {text(field): float(text(value)) for field, value in raw.items()}


def _load(raw: Any) -> dict[str, Any] | None:
    if raw is None:
        return None
    value = json.loads(text(raw))
    return value if isinstance(value, dict) else None
