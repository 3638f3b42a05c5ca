"""Belief: is a memory believed? (docs/truth-maintenance.md)

``trust`` is one of stated (default) | verified | disputed (an open contradiction touches it) |
superseded (a resolution went against it; ``superseded_by`` names the winner and ``valid_to`` says
until when it held). Belief is independent of visibility (state) and of time; every change here is
audited with its reason.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kenning.core import validation
from kenning.core.errors import Conflict, InvalidInput, NotFound
from kenning.core.models import TRUST_LEVELS, Memory
from kenning.runtime.context import Context
from kenning.store import CHANGED, SWAP_ATTEMPTS, pause


def belief_fields(memory: Memory) -> dict[str, Any]:
    """The fields a resolution may change, as they are now (kept so the
    resolution can be undone)."""
    return {
        "trust": memory.trust,
        "valid_to": memory.valid_to,
        "superseded_by": memory.superseded_by,
    }


def end_of_validity(loser: Memory, winner: Memory, now: float) -> float:
    """When the loser stopped holding: when the winner began, if that is after the loser began;
    otherwise (the winner is the older statement) the loser held until it was refuted, i.e. now."""
    winner_from = winner.valid_from if winner.valid_from is not None else winner.created_at
    loser_from = loser.valid_from if loser.valid_from is not None else loser.created_at
    return winner_from if winner_from > loser_from else max(now, loser_from)


class Belief:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def read(self, key: str) -> Memory:
        validation.key(key, self.ctx.store.prefix)
        memory = self.ctx.store.memories.read(key)
        if memory is None:
            raise NotFound(
                f"no memory {key}", hint="it may have been forgotten; check history(key)"
            )
        return memory

    def verify(self, key: str, note: str | None, *, actor: str) -> Memory:
        """Mark a memory verified. A disputed or superseded memory is
        settled by resolving instead."""
        memory = self.read(key)
        if memory.trust in ("disputed", "superseded"):
            raise Conflict(
                f"{key} is {memory.trust}; verifying it would hide that",
                hint=(
                    "resolve its contradiction with resolve_contradiction (list_contradictions "
                    "shows it)"
                ),
            )
        reason = validation.reason(note) or ""
        return self._set(memory, {"trust": "verified"}, actor=actor, action="verify", reason=reason)

    def set_trust(
        self,
        key: str,
        trust: str,
        *,
        actor: str,
        reason: str,
        action: str = "trust",
        details: dict[str, Any] | None = None,
    ) -> Memory | None:
        """Set ``trust`` on a memory that still exists; returns it as it is
        now (None when it is gone)."""
        if trust not in TRUST_LEVELS:
            raise InvalidInput(
                f"unknown trust {trust!r}", hint=f"use one of {', '.join(TRUST_LEVELS)}"
            )
        memory = self.ctx.store.memories.read(key)
        if memory is None:
            return None
        if memory.trust != trust:
            return self._set(
                memory, {"trust": trust}, actor=actor, action=action, reason=reason, details=details
            )
        return memory

    def supersede(
        self,
        loser: Memory,
        winner: Memory,
        *,
        actor: str,
        reason: str,
        details: dict[str, Any] | None = None,
    ) -> None:
        """The loser is superseded by the winner; its validity ends (see ``end_of_validity``)."""
        valid_to = end_of_validity(loser, winner, self.ctx.clock.now())
        changes = {"trust": "superseded", "superseded_by": winner.key, "valid_to": valid_to}
        self._set(loser, changes, actor=actor, action="supersede", reason=reason, details=details)

    def restore(
        self,
        key: str,
        prior: dict[str, Any],
        *,
        actor: str,
        reason: str,
        details: dict[str, Any] | None = None,
    ) -> None:
        """Put back the belief fields a resolution changed (undoing a
        supersede); gone keys are skipped."""
        memory = self.ctx.store.memories.read(key)
        if memory is None:
            return
        trust = prior.get("trust") or "stated"
        changes = {
            "trust": "stated" if trust == "disputed" else trust,
            "valid_to": prior.get("valid_to"),
            "superseded_by": prior.get("superseded_by"),
        }
        self._set(
            memory, changes, actor=actor, action="unsupersede", reason=reason, details=details
        )

    def _set(
        self,
        memory: Memory,
        changes: dict[str, Any],
        *,
        actor: str,
        action: str,
        reason: str,
        details: dict[str, Any] | None = None,
    ) -> Memory:
        """Write ``changes`` while the belief fields are as read (compare-and-set; on a
        concurrent change read again and retry) and audit them; returns the memory as
        written (no second read)."""
        for attempt in range(SWAP_ATTEMPTS):
            before = belief_fields(memory)
            changes = {**changes, "updated_at": self.ctx.clock.now()}
            # text: exact to compare
            read = {"trust": memory.trust, "superseded_by": memory.superseded_by}
            after = {name: changes.get(name, value) for name, value in before.items()}
            event = self.ctx.event(
                actor,
                action,
                memory.key,
                reason=reason,
                before=memory.content,
                after=memory.content,
                details={"before": before, "after": after, **(details or {})},
            )
            outcome = self.ctx.store.memories.swap(memory.key, read, changes, None, [event])
            if outcome != CHANGED:
                break
            pause(attempt)
            memory = self.read(memory.key)
        else:
            raise Conflict(
                f"{memory.key} kept changing while its trust was set; nothing was written",
                hint="retry the call",
            )
        # GONE (forgotten meanwhile): nothing written, nothing recorded
        return replace(memory, **changes)
