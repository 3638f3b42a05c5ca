"""A ruling: a decision over several memories, planned from what was read and committed as ONE
unit of work gated on it (docs/reliability.md, "Decisions").

Resolving a contradiction, merging duplicates or keeping them apart decides from the state of
several memories (and of a record). A ``Ruling`` takes each memory as read, plans every change
and audit event on its own copy (no write yet), then commits them together with
``Store.decide``: each memory taken is a gate of the unit on the fields a decision reads
(``GATED``), so when another call changed one of them in between, nothing is written, no event is
recorded, and the caller is told what changed (``changed``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kenning.core.models import Memory
from kenning.language import phrases
from kenning.runtime.context import Context
from kenning.store import AuditEvent, Committed, Op
from kenning.truth.belief import belief_fields

# the fields of a memory a decision is made from: visibility and belief
GATED = ("state", "trust", "superseded_by")


class Ruling:
    """Memories as read, the changes planned on them and their events; see the module docstring."""

    def __init__(self, ctx: Context, actor: str) -> None:
        self.ctx = ctx
        self.actor = actor
        self.at = ctx.clock.now()
        self.read: dict[str, Memory] = {}
        self.now: dict[str, Memory] = {}
        self.changes: dict[str, dict[str, Any]] = {}
        self.events: list[AuditEvent] = []
        self.new: list[tuple[Memory, Any]] = []
        self.gated: dict[str, tuple[str, ...]] = {}
        self.also: dict[str, list[Op]] = {}

    def take(self, memory: Memory, *extra: str) -> Memory:
        """Gate the ruling on ``memory`` as read (its ``GATED`` fields and the ``extra`` ones the
        decision computes from, e.g. the tags it unions); returns it as the ruling has it now."""
        self.read.setdefault(memory.key, memory)
        self.gated[memory.key] = (*self.gated.get(memory.key, GATED), *extra)
        return self.now.setdefault(memory.key, memory)

    def believe(
        self,
        key: str,
        changes: dict[str, Any],
        *,
        action: str,
        reason: str,
        details: dict[str, Any] | None = None,
    ) -> Memory:
        """Plan a belief change (the event carries the belief fields before and after, as
        ``Belief`` records them)."""
        memory = self.now[key]
        before = belief_fields(memory)
        after = {name: changes.get(name, value) for name, value in before.items()}
        event = self.ctx.event(
            self.actor,
            action,
            key,
            reason=reason,
            before=memory.content,
            after=memory.content,
            details={"before": before, "after": after, **(details or {})},
        )
        return self.change(key, changes, event)

    def change(
        self, key: str, changes: dict[str, Any], event: AuditEvent, also: tuple[Op, ...] = ()
    ) -> Memory:
        """Plan ``changes`` of a memory taken, recorded by ``event`` (``also``: writes derived
        from it, e.g. index entries)."""
        memory = replace(self.now[key], **changes, updated_at=self.at)
        self.now[key] = memory
        self.also.setdefault(key, []).extend(also)
        self.changes.setdefault(key, {}).update({**changes, "updated_at": self.at})
        self.events.append(event)
        return memory

    def archive(self, key: str, reason: str) -> Memory:
        """Plan archiving a memory taken, as ``Lifecycle`` archives (its reason, actor and time on
        the memory, its reinstate hints out of the hint index, an ``archive`` event)."""
        memory = self.now[key]
        moved = {
            "state": "archived",
            "state_reason": reason,
            "state_actor": self.actor,
            "state_changed_at": self.at,
            "reinstate_hints": None,
        }
        event = self.ctx.event(
            self.actor,
            "archive",
            key,
            reason=reason,
            before=memory.content,
            after=memory.content,
            details={"from": memory.state, "to": "archived", "reinstate_hints": []},
        )
        hints = self.ctx.store.hints
        unhinted = tuple(
            op for h in memory.reinstate_hints for op in hints.removing(phrases.normalise(h), key)
        )
        return self.change(key, moved, event, unhinted)

    def create(self, memory: Memory, vector: Any, event: AuditEvent) -> None:
        """Plan a new memory (e.g. a merge's)."""
        self.new.append((memory, vector))
        self.now[memory.key] = memory
        self.events.append(event)

    def record(self, *events: AuditEvent) -> None:
        """Events that record the decision itself (not a memory change)."""
        self.events.extend(events)

    def commit(self, also: list[Op] | tuple[Op, ...] = ()) -> Committed:
        """Every planned write and event, one unit gated on each memory taken (and on the gates
        in ``also``)."""
        memories = self.ctx.store.memories
        patches = [
            memories.change(
                key,
                {name: getattr(memory, name) for name in self.gated[key]},
                self.changes.get(key, {}),
                self.also.get(key, ()),
            )
            for key, memory in self.read.items()
        ]
        return self.ctx.store.decide(self.events, patches=patches, new=self.new, also=also)

    def changed(self) -> list[str]:
        """What changed since the memories were read (after a commit that did not apply)."""
        out: list[str] = []
        for key, was in self.read.items():
            now = self.ctx.store.memories.read(key)
            if now is None:
                out.append(f"{key} was forgotten")
                continue
            moved = [
                f"{name} {getattr(was, name) or 'none'} -> {getattr(now, name) or 'none'}"
                for name in self.gated[key]
                if getattr(was, name) != getattr(now, name)
            ]
            if moved:
                out.append(f"{key}: {', '.join(moved)}")
        return out
