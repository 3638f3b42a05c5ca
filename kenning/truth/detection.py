"""The pure contradiction checks: a value change (same subject, another value) or opposite
polarity, which of them found it, and which side of a pair is the older (no store, no model)."""

from __future__ import annotations

from kenning.core.models import Memory
from kenning.language import polarity, values

Found = polarity.Conflict | values.ValueChange


def conflict(older: str, newer: str) -> Found | None:
    """A value change (same subject, another value) first, else
    a polarity conflict. Pure."""
    return values.change(older, newer) or polarity.conflict(older, newer)


def age(memory: Memory) -> tuple[float, float, str]:
    """What orders two statements: when each began to hold (``valid_from``, by default when it
    was written), then when it was written. Side ``a`` of a record is the older."""
    began = memory.valid_from if memory.valid_from is not None else memory.created_at
    return (began, memory.created_at, memory.key)


def detector(found: Found) -> str:
    """The record's ``detector``: ``value``, ``reversal`` (an explicit cue in the newer
    statement) or ``polarity``."""
    if isinstance(found, values.ValueChange):
        return "value"
    return "reversal" if found.reversal else "polarity"
