"""Small registries beside the memories: suppressions, experience records
per project, the recall log.

Keys:
  {prefix}suppressions             HASH    normalised term -> JSON record
  {prefix}experience:<project>     ZSET    memory key -> time its experience was recorded
  {prefix}recall_log               STREAM  one entry per recall, trimmed to a maximum length
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import valkey
from valkey.client import Pipeline

from kenning.store.audit import AuditEvent
from kenning.store.client import call, text
from kenning.store.unit import Op, Unit, Units


class SuppressionStore:
    """The suppressions hash; each write goes with its audit events as one unit of work."""

    def __init__(self, client: valkey.Valkey, prefix: str, units: Units | None = None) -> None:
        self.client = client
        self.key = f"{prefix}suppressions"
        self.units = units or Units(client, prefix)

    def put(self, term: str, record: dict[str, Any], events: Sequence[AuditEvent]) -> None:
        self.units.commit(Unit(events).hset(self.key, {term: _encoded(record)}))

    def add(self, term: str, record: dict[str, Any], events: Sequence[AuditEvent]) -> bool:
        """Store a new suppression; False when the term is already suppressed
        (nothing written or recorded)."""
        unit = Unit(events).guard(self.key, {term: ""}).hset(self.key, {term: _encoded(record)})
        return self.units.commit(unit).applied

    def get(self, term: str) -> dict[str, Any] | None:
        raw = call(self.client.hget, self.key, term)
        return None if raw is None else dict(json.loads(text(raw)))

    def delete(self, term: str, record: dict[str, Any], events: Sequence[AuditEvent]) -> bool:
        """Remove the suppression while it is still ``record`` (as read);
        False when it changed or went."""
        unit = Unit(events).guard(self.key, {term: _encoded(record)}).hdel(self.key, term)
        return self.units.commit(unit).applied

    def all(self) -> dict[str, dict[str, Any]]:
        """Every suppression (a short list: one HGETALL per recall)."""
        return parse_all(call(self.client.hgetall, self.key))

    def queue_all(self, pipe: Pipeline) -> None:
        """Queue ``all`` on ``pipe`` (one command); ``parse_all`` reads its reply."""
        pipe.hgetall(self.key)


def _encoded(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True)


def parse_all(raw: dict[Any, Any]) -> dict[str, dict[str, Any]]:
    """An HGETALL of the suppressions hash as {term: record}. Pure."""
    return {text(k): dict(json.loads(text(v))) for k, v in raw.items()}


class ExperienceStore:
    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.prefix = prefix

    def key(self, project: str) -> str:
        return f"{self.prefix}experience:{project}"

    def add(self, project: str, memory_key: str, at: float) -> None:
        call(self.client.zadd, self.key(project), {memory_key: at})

    def adding(self, project: str, memory_key: str, at: float) -> list[Op]:
        """``add`` as a write of a unit (kenning.store.unit), carried by
        the memory's audited patch."""
        return [("ZADD", self.key(project), (repr(at), memory_key))]

    def remove(self, project: str, memory_key: str) -> None:
        call(self.client.zrem, self.key(project), memory_key)

    def keys(self, project: str, limit: int) -> list[str]:
        """Newest first."""
        return [text(k) for k in call(self.client.zrevrange, self.key(project), 0, limit - 1)]


class RecallLogStore:
    """The recall log stream. Entries may be written behind the recall (``Store.log_recall``):
    every read first calls ``settle``, which waits for this process's pending ones."""

    def __init__(
        self, client: valkey.Valkey, prefix: str, settle: Callable[[], None] | None = None
    ) -> None:
        self.client = client
        self.key = f"{prefix}recall_log"
        self.settle = settle or _settled

    def append(self, entry: dict[str, Any], max_entries: int) -> str:
        pipe = self.client.pipeline(transaction=False)
        self.queue_append(pipe, entry, max_entries)
        (entry_id,) = call(pipe.execute)
        return text(entry_id)

    def queue_append(self, pipe: Pipeline, entry: dict[str, Any], max_entries: int) -> None:
        """Queue ``append`` on ``pipe`` (one command, whose reply is the entry id)."""
        pipe.execute_command(*self.appending(entry, max_entries))  # type: ignore[no-untyped-call]

    def appending(self, entry: dict[str, Any], max_entries: int) -> tuple[Any, ...]:
        """The XADD that appends ``entry``, trimming the stream to exactly ``max_entries``."""
        return (
            "XADD",
            self.key,
            "MAXLEN",
            max_entries,
            "*",
            "entry",
            json.dumps(entry, sort_keys=True),
        )

    def newest(self, limit: int, before: str = "+") -> list[tuple[str, dict[str, Any]]]:
        """Up to ``limit`` entries, newest first, older than the id ``before``
        (exclusive when prefixed '(')."""
        self.settle()
        rows = call(self.client.xrevrange, self.key, max=before, count=limit)
        return [(text(i), dict(json.loads(text(raw[b"entry"])))) for i, raw in rows]

    def newest_containing(
        self, limit: int, before: str, needles: Sequence[bytes]
    ) -> tuple[list[tuple[str, dict[str, Any]]], str | None, int]:
        """``newest``, decoding only the entries whose stored JSON holds every needle (both
        ASCII-lowercased) or has escaped characters (whose text may hold a needle once decoded):
        (those entries, the id of the last entry read, how many were read). Decoding
        is most of a walk's cost."""
        self.settle()
        rows = call(self.client.xrevrange, self.key, max=before, count=limit)
        wanted = [n.lower() for n in needles]
        kept = [
            (text(i), dict(json.loads(raw[b"entry"])))
            for i, raw in rows
            if b"\\u" in raw[b"entry"] or all(n in raw[b"entry"].lower() for n in wanted)
        ]
        return kept, (text(rows[-1][0]) if rows else None), len(rows)

    def length(self) -> int:
        self.settle()
        return int(call(self.client.xlen, self.key))


def _settled() -> None:
    """Nothing is written behind (a store built without a writer)."""
