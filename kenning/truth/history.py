"""History and undo: one memory's audit trail, the audit log, and restoring a forgotten memory.

``forget`` keeps a snapshot (content and fields, never the vector) in a key that expires with the
retention window; the audit event records that it was kept and until when. Within
``KENNING_FORGET_RETENTION_DAYS`` of the forget, ``restore_forgotten`` writes the memory back under
its old key, re-embedded, and audits that too. After the window the snapshot is not used.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from kenning.core import validation
from kenning.core.errors import Conflict, InvalidInput, NotFound
from kenning.core.models import Memory, iso
from kenning.core.schema import FIELD_NAMES, namespace_of
from kenning.runtime.context import Context
from kenning.store import AuditEvent
from kenning.truth.contradictions import Contradictions

DAY = 86_400.0
# Rebuilds what another component derives from a memory written directly
# (reinstate hints, graveyard).
Reindex = Callable[[Memory], None]
HISTORY_LIMIT = 500
_CURSOR = re.compile(r"^\d{1,20}-\d{1,20}$")
_TIMES = (
    "created_at",
    "updated_at",
    "valid_from",
    "valid_to",
    "event_date",
    "expires_at",
    "last_recalled",
    "state_changed_at",
)
_TUPLES = ("tags", "reinstate_hints")


def from_snapshot(key: str, snapshot: dict[str, Any]) -> Memory:
    """A forget snapshot (public form: ISO times, lists) -> Memory. Unknown fields are ignored."""
    values: dict[str, Any] = {}
    for name, raw in snapshot.items():
        if name not in FIELD_NAMES or raw is None:
            continue
        if name in _TIMES:
            values[name] = validation.timestamp(name, raw)
        elif name in _TUPLES:
            values[name] = tuple(raw)
        else:
            values[name] = raw
    return Memory(key=key, **values)


@dataclass(frozen=True, slots=True)
class Standing:
    """Where a memory stands now (the part of it its history shows)."""

    state: str
    trust: str
    superseded_by: str | None


@dataclass(frozen=True, slots=True)
class MemoryHistory:
    """One memory's audit events, oldest first, and whether (and how) it exists
    now (``History.history``)."""

    key: str
    exists: bool
    current: Standing | None
    events: tuple[AuditEvent, ...]

    def public(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "exists": self.exists,
            "current": None if self.current is None else asdict(self.current),
            "events": [e.public() for e in self.events],
        }


@dataclass(frozen=True, slots=True)
class AuditPage:
    """Audit events, newest first; ``next`` is the cursor of the
    following page (None on the last)."""

    events: tuple[AuditEvent, ...]
    next: str | None

    def public(self) -> dict[str, Any]:
        return {"events": [e.public() for e in self.events], "next": self.next}


class History:
    def __init__(
        self, ctx: Context, contradictions: Contradictions, derived: tuple[Reindex, ...] = ()
    ) -> None:
        self.ctx = ctx
        self.contradictions = contradictions
        self.derived = derived

    def history(self, key: str, *, limit: int = HISTORY_LIMIT) -> MemoryHistory:
        """One memory's audit events (the newest ``limit``), oldest first,
        and whether it exists now."""
        validation.key(key, self.ctx.store.prefix)
        validation.bounded_int("limit", limit, 1, HISTORY_LIMIT)
        events = self.ctx.store.audit.latest(key, limit=limit)
        current = self.ctx.store.memories.read(key)
        if not events and current is None:
            raise NotFound(
                f"no memory {key} and no history for it", hint="copy a key from recall or audit_log"
            )
        standing = (
            None
            if current is None
            else Standing(current.state, current.trust, current.superseded_by)
        )
        return MemoryHistory(key, current is not None, standing, tuple(events))

    def audit_log(
        self,
        *,
        actor: str | None = None,
        action: str | None = None,
        since: str | float | None = None,
        before: str | None = None,
        limit: int = 50,
    ) -> AuditPage:
        """Recent mutations, newest first, filtered by actor, action and time; ``next`` pages on."""
        validation.bounded_int("limit", limit, 1, 500)
        if before and not _CURSOR.match(before):
            raise InvalidInput(
                f"{before!r} is not an audit cursor", hint="pass the `next` value of the last page"
            )
        # exclusive: the page starts after the last event seen
        cursor = "(" + before if before else "+"
        events = self.ctx.store.audit.recent(
            limit=limit,
            before=cursor,
            actor=actor or None,
            action=action or None,
            since=validation.timestamp("since", since),
        )
        return AuditPage(tuple(events), events[-1].id if len(events) == limit else None)

    def restore_forgotten(self, key: str, *, actor: str, reason: str | None = None) -> Memory:
        """Write a forgotten memory back from its snapshot (re-embedded)
        within the retention window."""
        validation.key(key, self.ctx.store.prefix)
        if self.ctx.store.memories.exists(key):
            raise Conflict(
                f"{key} exists; there is nothing to restore",
                hint="history(key) shows what happened",
            )
        event = self._last_forget(key)
        snapshot = self._snapshot(key, event)
        memory = from_snapshot(key, snapshot)
        if not memory.namespace:
            memory = replace(memory, namespace=namespace_of(key, self.ctx.store.prefix))
        # its records closed at the forget; the check below re-flags real ones
        if memory.trust == "disputed":
            memory = replace(memory, trust="stated")
        vector = self.ctx.embedder.embed(memory.content)
        self.ctx.store.memories.write(
            memory,
            vector,
            [
                self.ctx.event(
                    actor,
                    "restore_forgotten",
                    key,
                    reason=validation.reason(reason) or "",
                    after=memory.content,
                    details={"forgotten_at": iso(event.at), "forget_event": event.id},
                )
            ],
        )
        for rebuild in self.derived:
            rebuild(memory)
        self.ctx.store.snapshots.drop(key)
        # The memory is believed again: any contradiction it takes part in is real again.
        self.contradictions.on_remember(memory, vector, actor=actor)
        return memory

    def _snapshot(self, key: str, event: AuditEvent) -> dict[str, Any]:
        """The forgotten memory's kept fields, while the retention window holds them."""
        days = self.ctx.settings.forget_retention_days
        if self.ctx.clock.now() - event.at > days * DAY:
            raise Conflict(
                f"{key} was forgotten on {iso(event.at)}, more than {days} days ago",
                hint="the snapshot is past KENNING_FORGET_RETENTION_DAYS; restore it from a backup",
            )
        snapshot = self.ctx.store.snapshots.read(key)
        if snapshot is None:
            raise Conflict(
                f"the snapshot of {key} is gone (forgotten on {iso(event.at)})",
                hint=(
                    "snapshots expire after KENNING_FORGET_RETENTION_DAYS; restore it from a backup"
                ),
            )
        return snapshot

    def _last_forget(self, key: str) -> AuditEvent:
        for event in reversed(self.ctx.store.audit.latest(key, limit=HISTORY_LIMIT)):
            if event.action == "forget" and isinstance(event.details.get("snapshot"), dict):
                return event
        raise NotFound(
            f"{key} has no forget snapshot",
            hint="only memories removed with forget can be restored",
        )
