"""Accounts and login sessions at rest.

``{prefix}account:{username}`` is a hash (role, disabled, created_at, password: the argon2 hash);
``{prefix}accounts`` is the set of usernames, so accounts are listed without a scan.
``{prefix}session:{sha256}`` is a login session, keyed by the sha256 of its id (never the id
itself), with a Valkey TTL equal to its lifetime.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import valkey

from kenning.store import layout
from kenning.store.audit import AuditEvent
from kenning.store.client import call, text
from kenning.store.unit import Unit, Units


@dataclass(frozen=True)
class AccountRecord:
    username: str
    role: str
    disabled: bool
    created_at: float
    password_hash: str
    # sessions created before this (a disable, a password reset) are dead
    sessions_since: float = 0.0
    # how many changes the account has had (0: none, or made before changes were counted): what a
    # change is gated on, so two changes decided from one read cannot both apply
    revision: int = 0
    changed_by: str = ""  # who made the last change


@dataclass(frozen=True)
class SessionRecord:
    username: str
    csrf_token: str
    created_at: float
    expires_at: float


# a session's hash and its expiry at once (the cluster layout's MULTI)
_SESSION = "redis.call('HSET', KEYS[1], unpack(ARGV, 2)) redis.call('EXPIRE', KEYS[1], ARGV[1])"


class AccountStore:
    def __init__(self, client: valkey.Valkey, prefix: str, units: Units | None = None) -> None:
        self.client = client
        self.prefix = prefix
        self.names = f"{prefix}accounts"
        self.units = units or Units(client, prefix)

    def _key(self, username: str) -> str:
        return f"{self.prefix}account:{username}"

    def _session_key(self, digest: str) -> str:
        return f"{self.prefix}session:{digest}"

    def _hash(self, key: str) -> dict[str, str]:
        raw: Any = call(self.client.hgetall, key)
        return {text(k): text(v) for k, v in raw.items()}

    def add(self, record: AccountRecord, events: Sequence[AuditEvent]) -> bool:
        """Store a new account with its audit events; False (nothing written)
        when the username is taken.

        The name is claimed first (SADD), then the account and its events go as one unit of work."""
        if not call(self.client.sadd, self.names, record.username):
            return False
        fields = {
            "role": record.role,
            "disabled": "1" if record.disabled else "0",
            "created_at": repr(record.created_at),
            "password": record.password_hash,
        }
        self.units.commit(Unit(events).hset(self._key(record.username), fields))
        return True

    def get(self, username: str) -> AccountRecord | None:
        data = self._hash(self._key(username))
        if not data:
            return None
        return AccountRecord(
            username=username,
            role=data.get("role", "viewer"),
            disabled=data.get("disabled") == "1",
            created_at=float(data.get("created_at", "0") or 0),
            password_hash=data.get("password", ""),
            sessions_since=float(data.get("sessions_since", "0") or 0),
            revision=int(data.get("revision", "0") or 0),
            changed_by=data.get("changed_by", ""),
        )

    def update(
        self,
        username: str,
        fields: dict[str, str],
        events: Sequence[AuditEvent],
        *,
        keep_admin: str | None = None,
        revision: int | None = None,
    ) -> bool:
        """Change an existing account's fields with their audit events, one unit of work; with
        ``keep_admin``, only while that account is still an enabled admin; with ``revision``,
        only while the account is still at that revision (False: nothing written, or the
        account is gone)."""
        unit = self._gated(Unit(events), username, keep_admin, revision)
        return self.units.commit(unit.hset(self._key(username), fields)).applied

    def _gated(
        self, unit: Unit, username: str, keep_admin: str | None, revision: int | None
    ) -> Unit:
        if keep_admin is not None:
            unit = unit.gate(self._key(keep_admin), {"role": "admin", "disabled": "0"})
        if revision is None:
            return unit.gate(self._key(username))
        return unit.gate(self._key(username), {"revision": str(revision) if revision else ""})

    def rehash(self, username: str, password_hash: str) -> None:
        """The same password under current hashing parameters (at a login):
        not a change, not recorded."""
        call(self.client.hset, self._key(username), "password", password_hash)

    def remove(
        self,
        username: str,
        events: Sequence[AuditEvent],
        *,
        keep_admin: str | None = None,
        revision: int | None = None,
    ) -> bool:
        """Delete an account (its hash and its name in the set) with its audit events, one unit
        of work; ``keep_admin`` and ``revision`` as in ``update``."""
        unit = self._gated(Unit(events), username, keep_admin, revision)
        unit = unit.srem(self.names, username).delete(self._key(username))
        return self.units.commit(unit).applied

    def usernames(self) -> list[str]:
        return sorted(text(n) for n in call(self.client.smembers, self.names))

    def add_session(self, digest: str, record: SessionRecord, ttl_seconds: int) -> None:
        fields = {
            "username": record.username,
            "csrf": record.csrf_token,
            "created_at": repr(record.created_at),
            "expires_at": repr(record.expires_at),
        }
        key, ttl = self._session_key(digest), max(1, ttl_seconds)
        if layout.clustered(self.client):  # a cluster client refuses MULTI: one key, one script
            flat = [v for pair in fields.items() for v in pair]
            call(self.client.eval, _SESSION, 1, key, ttl, *flat)
            return
        pipe: Any = self.client.pipeline(transaction=True)
        pipe.hset(key, mapping=fields)
        pipe.expire(key, ttl)
        call(pipe.execute)

    def session(self, digest: str) -> SessionRecord | None:
        data = self._hash(self._session_key(digest))
        if not data:
            return None
        return SessionRecord(
            username=data.get("username", ""),
            csrf_token=data.get("csrf", ""),
            created_at=float(data.get("created_at", "0") or 0),
            expires_at=float(data.get("expires_at", "0") or 0),
        )

    def remove_session(self, digest: str) -> bool:
        return bool(call(self.client.delete, self._session_key(digest)))
