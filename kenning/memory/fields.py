"""What a memory's fields may hold: its kinds, trust levels and states, the short text fields,
and the content's checksum (the write path and the listings validate through here)."""

from __future__ import annotations

from kenning.core import schema
from kenning.core.errors import InvalidInput
from kenning.core.models import STATES, TRUST_LEVELS

KINDS = ("memory", "chunk", "fact", "experience", "context", "article", "skill", "merged")


def content_sha(text: str) -> str:
    """The checksum a memory of this content carries (derived on read, never stored: schema)."""
    return schema.content_sha(text)


def short(name: str, value: str | None, limit: int) -> str | None:
    if value is None or not value.strip():
        return None
    if len(value) > limit:
        raise InvalidInput(f"{name} is {len(value)} characters; the limit is {limit}")
    return value.strip()


def trust(value: str) -> str:
    if value not in TRUST_LEVELS:
        raise InvalidInput(f"unknown trust {value!r}", hint=f"use one of {', '.join(TRUST_LEVELS)}")
    return value


def kind(value: str) -> str:
    if value not in KINDS:
        raise InvalidInput(f"unknown kind {value!r}", hint=f"use one of {', '.join(KINDS)}")
    return value


def state(value: str) -> str:
    if value not in STATES:
        raise InvalidInput(f"unknown state {value!r}", hint=f"use one of {', '.join(STATES)}")
    return value
