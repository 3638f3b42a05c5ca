"""Bearer tokens at rest: only the sha256 of a secret is stored, never the secret.

``{prefix}token:{sha256}`` is a hash (name, scope, created_at, created_by and, when one was chosen,
profile); ``{prefix}tokens`` maps
each token name to its sha256, so tokens are listed and revoked by name without a scan.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import valkey

from kenning.store.audit import AuditEvent
from kenning.store.client import call, text
from kenning.store.unit import Unit, Units


@dataclass(frozen=True)
class TokenRecord:
    name: str
    scope: str
    created_at: float
    created_by: str
    digest: str
    profile: str = ""  # "" (or absent, on a token made before profiles): the server's default


class TokenStore:
    def __init__(self, client: valkey.Valkey, prefix: str, units: Units | None = None) -> None:
        self.client = client
        self.prefix = prefix
        self.names = f"{prefix}tokens"
        self.units = units or Units(client, prefix)

    def key(self, digest: str) -> str:
        """The hash of the token whose secret has ``digest`` (its family's slot on a cluster)."""
        return f"{self.prefix}token:{digest}"

    def add(self, record: TokenRecord, events: Sequence[AuditEvent]) -> bool:
        """Store a token with its audit events (one unit of work); False (nothing
        written) when the name is taken."""
        fields = {
            "name": record.name,
            "scope": record.scope,
            "created_at": repr(record.created_at),
            "created_by": record.created_by,
            **({"profile": record.profile} if record.profile else {}),
        }
        unit = (
            Unit(events)
            .guard(self.names, {record.name: ""})
            .hset(self.names, {record.name: record.digest})
        )
        return self.units.commit(unit.hset(self.key(record.digest), fields)).applied

    def by_digest(self, digest: str) -> TokenRecord | None:
        data = self._hash(self.key(digest))
        if not data:
            return None
        return TokenRecord(
            name=data.get("name", ""),
            scope=data.get("scope", ""),
            created_at=float(data.get("created_at", "0") or 0),
            created_by=data.get("created_by", ""),
            digest=digest,
            profile=data.get("profile", ""),
        )

    def all(self) -> list[TokenRecord]:
        names = self._hash(self.names)
        records = [self.by_digest(digest) for digest in names.values()]
        return sorted((r for r in records if r is not None), key=lambda r: r.name)

    def _hash(self, key: str) -> dict[str, str]:
        raw: Any = call(self.client.hgetall, key)
        return {text(k): text(v) for k, v in raw.items()}

    def remove(
        self, name: str, events: Callable[[TokenRecord], Sequence[AuditEvent]]
    ) -> TokenRecord | None:
        """Delete the token called ``name`` with the audit ``events(record)`` (one unit of work);
        None when there is none (or it was revoked meanwhile)."""
        digest = call(self.client.hget, self.names, name)
        record = None if digest is None else self.by_digest(text(digest))
        if record is None:
            return None
        unit = (
            Unit(events(record))
            .guard(self.names, {name: record.digest})
            .delete(self.key(record.digest))
        )
        return record if self.units.commit(unit.hdel(self.names, name)).applied else None
