"""Pipelined reads and writes for bulk imports: one round trip per batch instead of one per memory.

Plain pipelines (no MULTI/EXEC): inside a transaction the index work is deferred to the next search,
and a multi-key transaction is not cluster-safe. Each HSET is indexed as Valkey executes it, so a search
after ``write_many`` returns sees every written memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kenning import schema
from kenning.models import Memory
from kenning.store.audit import AuditEvent, AuditLog
from kenning.store.client import guarded
from kenning.store.memories import MemoryStore


def write_many(memories: MemoryStore, audit: AuditLog, rows: Sequence[tuple[Memory, Any]],
               events: Sequence[AuditEvent]) -> None:
    """HSET every new memory (with its vector) and XADD every audit event in one pipeline, then link the
    event ids to their memories' histories in a second one."""
    with guarded():
        pipe: Any = memories.client.pipeline(transaction=False)
        for memory, vector in rows:
            pipe.hset(memory.key, mapping=schema.encode(memory, vector))
        audit.queue(pipe, events)
        replies = pipe.execute()
    audit.link(events, replies[len(replies) - len(events):])
