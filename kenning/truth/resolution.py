"""Resolving a contradiction: one decision, one unit of work (docs/truth-maintenance.md,
docs/reliability.md "Decisions").

A decision (``keep_a``, ``keep_b``, ``both_valid``, ``not_a_contradiction``, ``merge``) is planned
from the record and both sides as read -- undoing a previous decision first when the record was
resolved -- and committed as ONE unit (``kenning.truth.ruling``): the record's status, decision and
time of resolution and each side's state, trust and ``superseded_by`` are its gates. Of concurrent
decisions on one record exactly one applies; the others get ``Conflict`` naming what changed, and
write and record nothing. What follows a decision and is its own audited step runs after it: a
merged memory is checked for contradictions like any remember, and a merged memory retired by a
changed decision closes its own records like any archive.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from typing import Any, Protocol

from ulid import ULID

from kenning.core import validation
from kenning.core.errors import Conflict, InvalidInput
from kenning.core.models import GLOBAL_PROJECT, Memory
from kenning.runtime.context import Context
from kenning.store import Contradiction, ContradictionStore
from kenning.truth.belief import end_of_validity
from kenning.truth.ruling import Ruling

DECISIONS: tuple[str, ...] = ("keep_a", "keep_b", "both_valid", "not_a_contradiction", "merge")
# who loses under each decision (undone when the decision changes)
LOSERS = {"keep_a": ("b",), "keep_b": ("a",), "merge": ("a", "b")}


@dataclass(frozen=True, slots=True)
class Asked:
    """A decision as asked, validated before anything is read or written."""

    decision: str
    note: str
    content: str  # the merged statement (merge only)


def asked(decision: str, note: str | None, content: str | None) -> Asked:
    if decision not in DECISIONS:
        raise InvalidInput(
            f"unknown decision {decision!r}", hint=f"use one of {', '.join(DECISIONS)}"
        )
    text = validation.reason(note) or ""
    if decision == "both_valid" and not text:
        raise InvalidInput(
            "both_valid needs a note saying how both hold",
            hint="e.g. note='pickle only for the internal cache; never for input'",
        )
    if decision == "merge" and not (content and content.strip()):
        raise InvalidInput(
            "merge needs the merged content", hint="pass content= with the one true statement"
        )
    merged = validation.content(content or "") if decision == "merge" else ""
    return Asked(decision, text, merged)


class Records(Protocol):
    """What a resolution needs of ``Contradictions`` (its records, sides and follow-ups)."""

    ctx: Context
    records: ContradictionStore

    def get(self, record_id: str) -> Contradiction: ...
    def read(self, key: str) -> Memory: ...
    def others_open(self, key: str, record: Contradiction) -> bool: ...
    def close_for(self, key: str, reason: str, *, actor: str) -> list[str]: ...
    def on_remember(self, memory: Memory, vector: Any, *, actor: str) -> list[Contradiction]: ...


class Resolution:
    """``Contradictions.resolve``'s planning and commit (see the module docstring)."""

    def __init__(self, owner: Records) -> None:
        self.owner = owner
        self.ctx = owner.ctx

    def resolve(self, record_id: str, ask: Asked, *, actor: str) -> Contradiction:
        record = self.owner.get(record_id)
        if record.status == "closed":
            raise Conflict(
                f"contradiction {record_id} is closed ({record.closed_reason})",
                hint="a side is gone or archived; reinstate it and check_contradictions again",
            )
        vector = self.ctx.embedder.embed(ask.content) if ask.decision == "merge" else None
        ruling = Ruling(self.ctx, actor)
        sides = {
            "a": ruling.take(self.owner.read(record.a)),
            "b": ruling.take(self.owner.read(record.b)),
        }
        retired = self._undo(ruling, record, sides) if record.status == "resolved" else None
        merged = self._apply(ruling, record, ask, vector)
        resolved = replace(
            record,
            status="resolved",
            decision=ask.decision,
            note=ask.note,
            resolved_by=actor,
            resolved_at=ruling.at,
            merged_key=merged.key if merged else "",
        )
        ruling.record(*self._events(record, resolved, actor))
        if not ruling.commit(self.owner.records.saving(resolved, read=record)).applied:
            raise Conflict(self._lost(record, ruling), hint=_RETRY)
        if retired is not None:  # like any archive: its own open records close
            self.owner.close_for(retired, "archived", actor=actor)
        if merged is not None:  # a new statement: checked like any remember
            self.owner.on_remember(merged, vector, actor=actor)
        return resolved

    def _events(self, record: Contradiction, resolved: Contradiction, actor: str) -> list[Any]:
        return [
            self.ctx.event(
                actor,
                "resolve_contradiction",
                key,
                reason=resolved.note,
                details={
                    "contradiction": record.id,
                    "decision": resolved.decision,
                    "previous_decision": record.decision,
                    "merged_key": resolved.merged_key,
                },
            )
            for key in (record.a, record.b)
        ]

    def _lost(self, record: Contradiction, ruling: Ruling) -> str:
        """What another call changed while this decision was made (nothing was written)."""
        now = self.owner.records.get(record.id)
        changes = ruling.changed()
        if now is None:
            changes.insert(0, f"contradiction {record.id} was removed")
        elif (now.status, now.decision, now.resolved_at) != (
            record.status,
            record.decision,
            record.resolved_at,
        ):
            by = f" by {now.resolved_by}" if now.resolved_by else ""
            decided = f" ({now.decision})" if now.decision else ""
            changes.insert(0, f"contradiction {record.id} is now {now.status}{decided}{by}")
        seen = "; ".join(changes) or "its sides changed"
        return f"contradiction {record.id} changed while it was being resolved: {seen}"

    def _undo(self, ruling: Ruling, record: Contradiction, sides: dict[str, Memory]) -> str | None:
        """Plan the undoing of the previous decision; returns the merged memory it retires."""
        reason = f"resolution of contradiction {record.id} changed (was {record.decision})"
        details = {"contradiction": record.id}
        for side in LOSERS.get(record.decision, ()):
            key = sides[side].key
            prior = record.prior.get(key, {})
            trust = prior.get("trust") or "stated"
            restored = {
                "trust": "stated" if trust == "disputed" else trust,
                "valid_to": prior.get("valid_to"),
                "superseded_by": prior.get("superseded_by"),
            }
            ruling.believe(key, restored, action="unsupersede", reason=reason, details=details)
            if self.owner.others_open(key, record) and ruling.now[key].trust != "disputed":
                ruling.believe(
                    key, {"trust": "disputed"}, action="dispute", reason=reason, details=details
                )
        merged = self.ctx.store.memories.read(record.merged_key) if record.merged_key else None
        if merged is None or merged.state == "archived":
            return None
        ruling.take(merged)
        ruling.archive(merged.key, reason)
        return merged.key

    def _apply(
        self, ruling: Ruling, record: Contradiction, ask: Asked, vector: Any
    ) -> Memory | None:
        """Plan the decision's effects on the sides; returns the merged memory (merge only)."""
        details = {"contradiction": record.id, "decision": ask.decision}
        reason = ask.note or f"contradiction {record.id}: {ask.decision}"
        a, b = ruling.now[record.a], ruling.now[record.b]
        winners = {"keep_a": (a, b), "keep_b": (b, a)}
        if ask.decision in winners:
            winner, loser = winners[ask.decision]
            self._supersede(ruling, loser, winner, reason, details)
            self._clear(ruling, winner.key, record)
            return None
        if ask.decision == "merge":
            merged = self._merged(a, b, ask.content, record, ruling)
            ruling.create(
                merged,
                vector,
                self.ctx.event(
                    ruling.actor,
                    "merge",
                    merged.key,
                    after=merged.content,
                    details={"merged_from": [a.key, b.key], "contradiction": record.id},
                ),
            )
            for side in (a, b):
                self._supersede(ruling, side, merged, reason, details)
            return merged
        for key in (a.key, b.key):
            self._clear(ruling, key, record)
        return None

    def _supersede(
        self, ruling: Ruling, loser: Memory, winner: Memory, reason: str, details: dict[str, Any]
    ) -> None:
        changes = {
            "trust": "superseded",
            "superseded_by": winner.key,
            "valid_to": end_of_validity(loser, winner, ruling.at),
        }
        ruling.believe(loser.key, changes, action="supersede", reason=reason, details=details)

    def _clear(self, ruling: Ruling, key: str, record: Contradiction) -> None:
        """Plan lifting ``disputed`` unless another open contradiction still touches the memory."""
        memory = ruling.now[key]
        if memory.trust != "disputed" or self.owner.others_open(key, record):
            return
        prior = str(record.prior.get(key, {}).get("trust") or "stated")
        ruling.believe(
            key,
            {"trust": "stated" if prior in ("disputed", "superseded") else prior},
            action="undispute",
            reason=f"contradiction {record.id} settled",
            details={"contradiction": record.id},
        )

    def _merged(
        self, a: Memory, b: Memory, text: str, record: Contradiction, ruling: Ruling
    ) -> Memory:
        tags = tuple(dict.fromkeys((*a.tags, *b.tags)))[: validation.MAX_TAGS]
        return Memory(
            key=self.ctx.store.memories.new_key(a.namespace, str(ULID())),
            content=text,
            namespace=a.namespace,
            project=a.project if a.project == b.project else GLOBAL_PROJECT,
            tags=tags,
            kind="merged",
            actor=ruling.actor,
            created_at=ruling.at,
            updated_at=ruling.at,
            valid_from=ruling.at,
            content_sha=hashlib.sha256(text.encode("utf-8")).hexdigest(),
            metadata={"merged_from": [a.key, b.key], "contradiction": record.id},
        )


_RETRY = "read it again (list_contradictions) and decide from what it shows; nothing was written"
