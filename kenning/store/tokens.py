"""Bearer tokens at rest: only the sha256 of a secret is stored, never the secret.

``{prefix}token:{sha256}`` is a hash (name, scope, created_at, created_by); ``{prefix}tokens`` maps each
token name to its sha256, so tokens are listed and revoked by name without a scan.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import valkey

from kenning.store.client import call, text


@dataclass(frozen=True)
class TokenRecord:
    name: str
    scope: str
    created_at: float
    created_by: str
    digest: str


class TokenStore:
    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self.names = f"{prefix}tokens"

    def _key(self, digest: str) -> str:
        return f"{self.prefix}token:{digest}"

    def add(self, record: TokenRecord) -> bool:
        """Store a token; False (and nothing written) when the name is taken."""
        if not call(self.client.hsetnx, self.names, record.name, record.digest):
            return False
        fields = {"name": record.name, "scope": record.scope, "created_at": repr(record.created_at),
                  "created_by": record.created_by}
        call(self.client.hset, self._key(record.digest), mapping=fields)
        return True

    def by_digest(self, digest: str) -> TokenRecord | None:
        data = self._hash(self._key(digest))
        if not data:
            return None
        return TokenRecord(name=data.get("name", ""), scope=data.get("scope", ""),
                           created_at=float(data.get("created_at", "0") or 0),
                           created_by=data.get("created_by", ""), digest=digest)

    def all(self) -> list[TokenRecord]:
        names = self._hash(self.names)
        records = [self.by_digest(digest) for digest in names.values()]
        return sorted((r for r in records if r is not None), key=lambda r: r.name)

    def _hash(self, key: str) -> dict[str, str]:
        raw: Any = call(self.client.hgetall, key)
        return {text(k): text(v) for k, v in raw.items()}

    def remove(self, name: str) -> TokenRecord | None:
        """Delete the token called ``name``; None when there is none."""
        digest = call(self.client.hget, self.names, name)
        if digest is None:
            return None
        record = self.by_digest(text(digest))
        call(self.client.delete, self._key(text(digest)))
        call(self.client.hdel, self.names, name)
        return record
