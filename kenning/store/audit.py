"""The append-only audit stream.

Every mutation appends one event to ``{prefix}audit`` (the global log, filterable by actor, action
and time) and the event's id to ``{prefix}events:{key}`` (one memory's history, read without a
scan), in the same unit of work as the write it records (kenning.store.unit: this module only
reads). The id list costs ~0.1 KB per memory where a per-memory copy of the stream cost ~0.8 KB
(docs/benchmarks.md); the events themselves live once, in the global stream. Stores written before
that change keep their per-memory streams ``{prefix}history:{key}``: ``history`` reads both and
merges them by event id. Events are never edited; the content of a forgotten memory is kept apart
(kenning.store.snapshots).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import valkey

from kenning.core.models import iso
from kenning.store.client import call, text


def digest(content: str | None) -> str:
    """Short sha256 of a memory's content ('' when there is none)."""
    if content is None:
        return ""
    return hashlib.sha256(content.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class AuditEvent:
    actor: str
    action: str
    key: str
    reason: str = ""
    at: float = 0.0
    before: str = ""
    after: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    id: str = ""

    def fields(self) -> dict[str, str]:
        return {
            "actor": self.actor,
            "action": self.action,
            "key": self.key,
            "reason": self.reason,
            "at": repr(self.at),
            "before": self.before,
            "after": self.after,
            "details": json.dumps(self.details, sort_keys=True),
        }

    def public(self) -> dict[str, Any]:
        """The event as plain data: who, what, why, when, before/after digests and details."""
        return {
            "id": self.id,
            "at": iso(self.at),
            "actor": self.actor,
            "action": self.action,
            "key": self.key,
            "reason": self.reason,
            "before": self.before,
            "after": self.after,
            "details": dict(self.details),
        }

    @classmethod
    def from_entry(cls, entry_id: Any, raw: dict[Any, Any]) -> AuditEvent:
        data = {text(k): text(v) for k, v in raw.items()}
        return cls(
            id=text(entry_id),
            actor=data.get("actor", ""),
            action=data.get("action", ""),
            key=data.get("key", ""),
            reason=data.get("reason", ""),
            at=float(data.get("at", "0") or 0),
            before=data.get("before", ""),
            after=data.get("after", ""),
            details=json.loads(data.get("details", "{}") or "{}"),
        )


class AuditLog:
    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.stream = f"{prefix}audit"
        self.prefix = prefix

    def events_key(self, key: str) -> str:
        """The list of one memory's event ids."""
        return f"{self.prefix}events:{key}"

    def history_key(self, key: str) -> str:
        """One memory's own stream, as written before the id lists (read, never written)."""
        return f"{self.prefix}history:{key}"

    def history(self, key: str, *, limit: int = 200) -> list[AuditEvent]:
        """One memory's oldest ``limit`` events, oldest first."""
        return self._events(key, limit, newest=False)

    def latest(self, key: str, *, limit: int = 200) -> list[AuditEvent]:
        """One memory's newest ``limit`` events, oldest first
        (``history`` gives the oldest ones)."""
        return self._events(key, limit, newest=True)

    def _events(self, key: str, limit: int, *, newest: bool) -> list[AuditEvent]:
        """Both kinds of history (the id list, a legacy stream), merged by
        event id: two round trips."""
        pipe: Any = self.client.pipeline(transaction=False)
        if newest:
            pipe.xrevrange(self.history_key(key), count=limit)
            pipe.lrange(self.events_key(key), -limit, -1)
        else:
            pipe.xrange(self.history_key(key), count=limit)
            pipe.lrange(self.events_key(key), 0, limit - 1)
        legacy, ids = call(pipe.execute)
        rows = {text(i): raw for i, raw in legacy}
        wanted = [text(i) for i in ids if text(i) not in rows]
        if wanted:
            pipe = self.client.pipeline(transaction=False)
            for entry_id in wanted:
                pipe.xrange(self.stream, min=entry_id, max=entry_id, count=1)
            for found in call(pipe.execute):
                # an id trimmed from the stream is skipped
                rows.update((text(i), raw) for i, raw in found)
        order = sorted(rows, key=id_order)
        chosen = order[-limit:] if newest else order[:limit]
        return [AuditEvent.from_entry(i, rows[i]) for i in chosen]

    def recent(
        self,
        *,
        limit: int = 50,
        before: str = "+",
        actor: str | None = None,
        action: str | None = None,
        since: float | None = None,
    ) -> list[AuditEvent]:
        """Newest first, filtered; pages through the stream backwards in bounded chunks."""
        out: list[AuditEvent] = []
        cursor = before
        while len(out) < limit:
            rows = call(self.client.xrevrange, self.stream, max=cursor, count=500)
            if not rows:
                break
            for entry_id, raw in rows:
                event = AuditEvent.from_entry(entry_id, raw)
                if since is not None and event.at < since:
                    return out
                if by(event, actor, action):
                    out.append(event)
                    if len(out) >= limit:
                        break
            cursor = "(" + text(rows[-1][0])
        return out


def by(event: AuditEvent, actor: str | None, action: str | None) -> bool:
    """Whether ``event`` passes an audit listing's filters (None: any actor, any action)."""
    return (actor is None or event.actor == actor) and (action is None or event.action == action)


def id_order(entry_id: str) -> tuple[int, int]:
    millis, _, seq = entry_id.partition("-")
    return int(millis), int(seq or 0)
