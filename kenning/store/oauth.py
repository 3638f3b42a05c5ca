"""OAuth state at rest (docs/remote-access.md): clients, pending authorizations, codes, tokens, grants.

Every secret (code, access token, refresh token, client secret) is keyed by its sha256, never stored.
Records are JSON strings under ``{prefix}oauth:``:

- ``client:{id}`` (no TTL) and the set ``clients``; ``client-families:{id}``: the client's token families;
- ``request:{id}``: a pending /authorize request while the person logs in and consents (TTL);
- ``code:{sha}``: an authorization code, consumed with GETDEL (single use, atomic across replicas);
  ``code-used:{sha}``: the family a consumed code started, so a replayed code revokes it;
- ``access:{sha}`` / ``refresh:{sha}``: tokens (TTL = lifetime); ``rotated:{sha}``: set once with NX when
  a refresh token is used, so exactly one concurrent refresh rotates it;
- ``family:{id}``: one authorization's grant (client, person, scopes, resource, revoked), and
  ``family-tokens:{id}``: the keys of its tokens, deleted together on revocation;
- the hash ``grants``: "{client_id} {username}" -> the scopes a person consented to.
"""

from __future__ import annotations

import json
from typing import Any

import valkey

from kenning.store.client import call, text


class OAuthStore:
    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.base = f"{prefix}oauth:"

    def key(self, kind: str, ident: str) -> str:
        return f"{self.base}{kind}:{ident}"

    def put(self, kind: str, ident: str, record: dict[str, Any], *, ttl: int | None = None,
            family: str | None = None) -> None:
        """Write one record; with ``family``, also remember its key for the family's revocation."""
        pipe: Any = self.client.pipeline(transaction=False)  # one round trip; keys may differ in slot
        pipe.set(self.key(kind, ident), json.dumps(record, sort_keys=True), ex=ttl)
        if family is not None:
            members = self.key("family-tokens", family)
            pipe.sadd(members, self.key(kind, ident))
            if ttl is not None:  # callers write the longest-lived token (the refresh token) last
                pipe.expire(members, ttl)
        call(pipe.execute)

    def get(self, kind: str, ident: str) -> dict[str, Any] | None:
        return _load(call(self.client.get, self.key(kind, ident)))

    def take(self, kind: str, ident: str) -> dict[str, Any] | None:
        """Read and delete in one atomic step: of concurrent callers exactly one gets the record."""
        return _load(call(self.client.getdel, self.key(kind, ident)))

    def claim(self, kind: str, ident: str, record: dict[str, Any], *, ttl: int) -> bool:
        """Write only if absent (SET NX): True for the one caller that wrote it."""
        return bool(call(self.client.set, self.key(kind, ident), json.dumps(record, sort_keys=True),
                         ex=ttl, nx=True))

    def delete(self, kind: str, ident: str) -> bool:
        return bool(call(self.client.delete, self.key(kind, ident)))

    def add_client(self, client_id: str, record: dict[str, Any]) -> None:
        pipe: Any = self.client.pipeline(transaction=False)  # one round trip; keys may differ in slot
        pipe.set(self.key("client", client_id), json.dumps(record, sort_keys=True))
        pipe.sadd(f"{self.base}clients", client_id)
        call(pipe.execute)

    def remove_client(self, client_id: str) -> None:
        pipe: Any = self.client.pipeline(transaction=False)
        pipe.delete(self.key("client", client_id))
        pipe.delete(self.key("client-families", client_id))
        pipe.srem(f"{self.base}clients", client_id)
        call(pipe.execute)

    def client_ids(self) -> list[str]:
        return sorted(text(c) for c in call(self.client.smembers, f"{self.base}clients"))

    def link_family(self, client_id: str, family: str) -> None:
        call(self.client.sadd, self.key("client-families", client_id), family)

    def families_of(self, client_id: str) -> list[str]:
        return sorted(text(f) for f in call(self.client.smembers, self.key("client-families", client_id)))

    def drop_family_tokens(self, family: str) -> int:
        """Delete every token of a family: the number of keys deleted."""
        members = self.key("family-tokens", family)
        keys = [text(k) for k in call(self.client.smembers, members)]
        pipe: Any = self.client.pipeline(transaction=False)
        for key in [*keys, members]:  # one key per command (cluster-safe, DESIGN §2)
            pipe.delete(key)
        return sum(int(n) for n in call(pipe.execute)) - (1 if keys else 0)

    def set_grant(self, client_id: str, username: str, record: dict[str, Any]) -> None:
        call(self.client.hset, f"{self.base}grants", f"{client_id} {username}", json.dumps(record, sort_keys=True))

    def grants(self) -> dict[tuple[str, str], dict[str, Any]]:
        raw: Any = call(self.client.hgetall, f"{self.base}grants")
        out: dict[tuple[str, str], dict[str, Any]] = {}
        for field, value in raw.items():
            client_id, _, username = text(field).partition(" ")
            out[(client_id, username)] = json.loads(text(value))
        return out

    def drop_grants(self, client_id: str) -> None:
        fields = [f"{c} {u}" for c, u in self.grants() if c == client_id]
        if fields:
            call(self.client.hdel, f"{self.base}grants", *fields)


def _load(raw: Any) -> dict[str, Any] | None:
    if raw is None:
        return None
    value = json.loads(text(raw))
    return value if isinstance(value, dict) else None
