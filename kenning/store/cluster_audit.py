"""The audit log's read side in the cluster layout: history lists in their record's slot, and the
partitioned stream read back as one log, newest first.

A record's history list ``{prefix}events:{<key>}`` holds its events whole (kenning.store.
cluster_unit writes them in the record's slot with the write), so one record's history is one
LRANGE, with no stream read. The global log is ``slots.PARTITIONS`` streams; ``recent`` merges
them by entry id (each partition is in id order, so a merge of their newest-first pages is the
log newest first) and pages by the last id seen, as on one server.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

from kenning.store import slots
from kenning.store.audit import AuditEvent, AuditLog, by, id_order
from kenning.store.client import call, text
from kenning.store.cluster_unit import history_entry

CHUNK = 200  # entries read from each partition per round trip


class ClusterAuditLog(AuditLog):
    def events_key(self, key: str) -> str:
        return slots.events_key(self.prefix, key)

    def _events(self, key: str, limit: int, *, newest: bool) -> list[AuditEvent]:
        start, stop = (-limit, -1) if newest else (0, limit - 1)
        rows = call(self.client.lrange, self.events_key(key), start, stop)
        return [history_entry(row) for row in rows]

    def recent(
        self,
        *,
        limit: int = 50,
        before: str = "+",
        actor: str | None = None,
        action: str | None = None,
        since: float | None = None,
    ) -> list[AuditEvent]:
        out: list[AuditEvent] = []
        for event in self.merged(before):
            if since is not None and event.at < since:
                break
            if by(event, actor, action):
                out.append(event)
                if len(out) >= limit:
                    break
        return out

    def merged(self, before: str = "+") -> Iterator[AuditEvent]:
        """Every partition's events older than ``before`` (a stream id, ``(`` = exclusive, or
        ``+``), newest first."""
        streams = slots.audit_keys(self.prefix)
        cursors = [before] * len(streams)
        pages = self._pages(streams, cursors)
        heap: list[tuple[tuple[int, int], int, int]] = []
        for part, page in enumerate(pages):
            if page:
                heapq.heappush(heap, (_negated(page[0][0]), part, 0))
        while heap:
            _, part, at = heapq.heappop(heap)
            entry_id, raw = pages[part][at]
            yield AuditEvent.from_entry(entry_id, raw)
            at += 1
            if at == len(pages[part]) and len(pages[part]) == CHUNK:
                cursors[part] = "(" + text(entry_id)
                pages[part] = self._pages([streams[part]], [cursors[part]])[0]
                at = 0
            if at < len(pages[part]):
                heapq.heappush(heap, (_negated(pages[part][at][0]), part, at))

    def _pages(self, streams: list[str], cursors: list[str]) -> list[list[Any]]:
        pipe: Any = self.client.pipeline(transaction=False)
        for stream, cursor in zip(streams, cursors, strict=True):
            pipe.xrevrange(stream, max=cursor, count=CHUNK)
        return [list(rows) for rows in call(pipe.execute)]


def _negated(entry_id: Any) -> tuple[int, int]:
    millis, seq = id_order(text(entry_id))
    return -millis, -seq
