"""The store: the only package that talks to Valkey."""

from __future__ import annotations

import valkey

from kenning.store.audit import AuditEvent, AuditLog, digest
from kenning.store.client import call, connect, text
from kenning.store.feeds import FeedStateStore
from kenning.store.memories import Hit, MemoryStore, Near, SearchResult
from kenning.store.patches import SWAP_ATTEMPTS, Patch, pause
from kenning.store.snapshots import Snapshots
from kenning.store.unit import APPLIED, CHANGED, GONE, Committed, Unit, Units

__all__ = ["APPLIED", "CHANGED", "GONE", "SWAP_ATTEMPTS", "AuditEvent", "AuditLog", "Committed", "Hit", "MemoryStore",
           "Near", "Patch", "SearchResult", "Store", "Unit", "connect", "digest", "pause"]


class Store:
    """Everything the engine needs from Valkey, under one key prefix."""

    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self.memories = MemoryStore(client, prefix)
        self.audit = AuditLog(client, prefix)
        self.snapshots = Snapshots(client, prefix)
        self.feeds = FeedStateStore(client, prefix)

    @property
    def units(self) -> Units:
        """Units of work (a write with its audit events, one round trip): the one way the engine writes."""
        return self.memories.units

    def record(self, events: list[AuditEvent]) -> Committed:
        """Events that record no write of their own, in one round trip."""
        return self.units.commit(Unit(events))

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
