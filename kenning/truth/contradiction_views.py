"""What the contradiction service answers: a check's report, a re-check's closings, a record with
both sides as they stand now, and the board of them (kenning.truth.contradictions)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kenning.core.models import Memory, iso
from kenning.store import Contradiction


@dataclass(frozen=True, slots=True)
class Recheck:
    """Maintenance's re-check of the open records: how many were looked at, which closed and why."""

    examined: int
    closed: list[dict[str, str]]  # {"id", "reason"}
    still_open: int


@dataclass(frozen=True)
class CheckReport:
    """What an on-demand check looked at and found."""

    examined: int
    opened: tuple[Contradiction, ...]
    open: tuple[Contradiction, ...]  # already-open records touching what was examined
    # examined but not checkable (no stored vector): named, not hidden
    without_vector: tuple[str, ...] = ()

    def public(self) -> dict[str, Any]:
        return {
            "examined": self.examined,
            "opened": [c.public() for c in self.opened],
            "already_open": [c.public() for c in self.open],
            "without_vector": list(self.without_vector),
        }


@dataclass(frozen=True, slots=True)
class Side:
    """One side of a contradiction as it stands now (``memory`` None when it is gone)."""

    key: str
    memory: Memory | None

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "exists": self.memory is not None}
        if self.memory is not None:
            m = self.memory
            out.update(
                content=m.content[:1_000],
                project=m.project,
                state=m.state,
                trust=m.trust,
                created_at=iso(m.created_at),
            )
        return out


@dataclass(frozen=True, slots=True)
class SideBySide:
    """A record with both sides' current content, state and trust, for reading side by side."""

    record: Contradiction
    a: Side
    b: Side

    def public(self) -> dict[str, Any]:
        return {**self.record.public(), "a": self.a.public(), "b": self.b.public()}


@dataclass(frozen=True, slots=True)
class Board:
    """``Contradictions.board``: records with both sides described, and how many match in all."""

    contradictions: tuple[SideBySide, ...]
    open_total: int

    def public(self) -> dict[str, Any]:
        return {
            "contradictions": [c.public() for c in self.contradictions],
            "open_total": self.open_total,
        }
