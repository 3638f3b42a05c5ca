"""The append-only audit stream.

Every mutation appends one event to ``{prefix}audit`` (the global log, filterable by actor, action and
time) and the same event to ``{prefix}history:{key}`` (one memory's history, read without a scan).
Events are never edited; snapshots of forgotten memories ride in the event's ``snapshot`` field.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

import valkey

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
            "actor": self.actor, "action": self.action, "key": self.key, "reason": self.reason,
            "at": repr(self.at), "before": self.before, "after": self.after,
            "details": json.dumps(self.details, sort_keys=True),
        }

    @classmethod
    def from_entry(cls, entry_id: Any, raw: dict[Any, Any]) -> AuditEvent:
        data = {text(k): text(v) for k, v in raw.items()}
        return cls(
            id=text(entry_id), actor=data.get("actor", ""), action=data.get("action", ""),
            key=data.get("key", ""), reason=data.get("reason", ""), at=float(data.get("at", "0") or 0),
            before=data.get("before", ""), after=data.get("after", ""),
            details=json.loads(data.get("details", "{}") or "{}"),
        )


class AuditLog:
    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.stream = f"{prefix}audit"
        self.prefix = prefix

    def history_key(self, key: str) -> str:
        return f"{self.prefix}history:{key}"

    def append(self, event: AuditEvent) -> str:
        """Add the event to the global stream and to its memory's history, in one round trip."""
        fields = event.fields()
        pipe: Any = self.client.pipeline(transaction=False)
        pipe.xadd(self.stream, fields)
        if event.key:
            pipe.xadd(self.history_key(event.key), fields)
        return text(call(pipe.execute, raise_on_error=True)[0])

    def history(self, key: str, *, limit: int = 200) -> list[AuditEvent]:
        rows = call(self.client.xrange, self.history_key(key), count=limit)
        return [AuditEvent.from_entry(i, raw) for i, raw in rows]

    def latest(self, key: str, *, limit: int = 200) -> list[AuditEvent]:
        """One memory's newest ``limit`` events, oldest first (``history`` gives the oldest ones)."""
        rows = call(self.client.xrevrange, self.history_key(key), count=limit)
        return [AuditEvent.from_entry(i, raw) for i, raw in reversed(rows)]

    def recent(self, *, limit: int = 50, before: str = "+", actor: str | None = None,
               action: str | None = None, since: float | None = None) -> list[AuditEvent]:
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
                if (actor is None or event.actor == actor) and (action is None or event.action == action):
                    out.append(event)
                    if len(out) >= limit:
                        break
            cursor = "(" + text(rows[-1][0])
        return out
