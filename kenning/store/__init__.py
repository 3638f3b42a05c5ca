"""The store: the only package that talks to Valkey."""

from __future__ import annotations

import valkey

from kenning.store.audit import AuditEvent, AuditLog, digest
from kenning.store.client import call, connect, text
from kenning.store.feeds import FeedStateStore
from kenning.store.memories import Hit, MemoryStore, Near, SearchResult
from kenning.store.snapshots import Snapshots

__all__ = ["AuditEvent", "AuditLog", "Hit", "MemoryStore", "Near", "SearchResult", "Store", "connect", "digest"]


class Store:
    """Everything the engine needs from Valkey, under one key prefix."""

    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self.memories = MemoryStore(client, prefix)
        self.audit = AuditLog(client, prefix)
        self.snapshots = Snapshots(client, prefix)
        self.feeds = FeedStateStore(client, prefix)

    def ping(self) -> bool:
        return bool(call(self.client.ping))

    def modules(self) -> list[str]:
        """Names of the loaded modules (e.g. 'search')."""
        reply = call(self.client.execute_command, "MODULE", "LIST")
        names: list[str] = []
        for entry in reply:
            pairs = {text(entry[i]): entry[i + 1] for i in range(0, len(entry) - 1, 2)}
            names.append(text(pairs.get("name", "")))
        return names

    def key(self, *parts: str) -> str:
        """A non-memory key under this prefix, e.g. key('meta', 'tokens')."""
        return self.prefix + ":".join(parts)
