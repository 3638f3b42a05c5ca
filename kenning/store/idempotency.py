"""Idempotent writes: the first reply to a caller's idempotency key, kept for a day, so a retry
after an ambiguous failure (the write committed, the reply was lost) returns that reply instead of
writing again. One key per idempotency key (cluster-safe); ``claim`` (SET NX PX) makes two
concurrent calls with the same key run the write once: the second waits for the first one's reply.
"""

from __future__ import annotations

import json
import time
from typing import Any

import valkey

from kenning.store.client import call, text

PENDING = "pending"


class Replies:
    """Replies by (actor, idempotency key) under one key prefix."""

    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.prefix = prefix

    def key(self, digest: str) -> str:
        return f"{self.prefix}idem:{digest}"

    def claim(self, digest: str, *, pending_seconds: float) -> bool:
        """Mark the key as in progress; False when a reply (or another
        call in progress) holds it."""
        return bool(
            call(
                self.client.set,
                self.key(digest),
                PENDING,
                nx=True,
                px=max(1, round(pending_seconds * 1000)),
            )
        )

    def reply(self, digest: str, *, wait_seconds: float) -> dict[str, Any] | None:
        """The stored reply; waits while another call with the same key is in progress. None when
        there is none (never was, expired, or the call in progress failed and released it)."""
        deadline = time.monotonic() + wait_seconds
        while True:
            raw = call(self.client.get, self.key(digest))
            if raw is None:
                return None
            if text(raw) != PENDING:
                loaded: dict[str, Any] = json.loads(text(raw))
                return loaded
            if time.monotonic() > deadline:
                return None
            time.sleep(0.01)

    def keep(self, digest: str, reply: dict[str, Any], *, ttl_seconds: int) -> None:
        call(self.client.set, self.key(digest), json.dumps(reply, sort_keys=True), ex=ttl_seconds)

    def release(self, digest: str) -> None:
        """Drop an in-progress marker after a failed call, so a retry may run the write."""
        call(self.client.delete, self.key(digest))
