"""Snapshots of forgotten memories, kept for the retention window and then gone for good.

A snapshot (every field but the vector) lives in ``{prefix}forgotten:{key}`` with a Valkey TTL of
the retention window, so a mistaken forget can be undone within the window and a forget really
forgets after it. The audit event of the forget records that a snapshot was kept and
until when, never the content.
"""

from __future__ import annotations

import json
from typing import Any

import valkey

from kenning.store.client import call, text


class Snapshots:
    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.prefix = prefix

    def key(self, memory_key: str) -> str:
        return f"{self.prefix}forgotten:{memory_key}"

    def keep(self, snapshots: dict[str, dict[str, Any]], ttl_seconds: int) -> None:
        """Store each snapshot (memory key -> fields) with the TTL, in one round trip."""
        if not snapshots:
            return
        pipe = self.client.pipeline(transaction=False)
        for memory_key, fields in snapshots.items():
            pipe.set(self.key(memory_key), json.dumps(fields, sort_keys=True), ex=ttl_seconds)
        call(pipe.execute)

    def read(self, memory_key: str) -> dict[str, Any] | None:
        raw = call(self.client.get, self.key(memory_key))
        if raw is None:
            return None
        loaded = json.loads(text(raw))
        return loaded if isinstance(loaded, dict) else None

    def drop(self, memory_key: str) -> None:
        call(self.client.delete, self.key(memory_key))
