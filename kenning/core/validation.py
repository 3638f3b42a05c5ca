"""Input limits and allowlists, refused with a hint that says how to fix the input. Pure.

Limits (docs/memory-model.md): content 1-50,000 characters; up to 20 tags of 1-100 characters;
project names and tags are lower-cased and must match their allowlists below; dates lie from
1900-01-01 up to 8999-12-31 UTC.
"""

from __future__ import annotations

import math
import re
import unicodedata
from datetime import UTC, datetime

from kenning.core.errors import InvalidInput, quote
from kenning.core.models import GLOBAL_PROJECT
from kenning.core.schema import NAMESPACES

MAX_CONTENT = 50_000
MAX_QUERY = 2_000
MAX_TITLE = 300
MAX_SOURCE = 2_000
MAX_TAGS = 20
MAX_TAG_LEN = 100
MAX_PROJECT = 64
MAX_REASON = 2_000
MAX_ACTOR = 100
IDEMPOTENCY_KEY_RE = re.compile(r"^[A-Za-z0-9._:-]{8,128}$")
IDEMPOTENCY_KEY_RULE = (
    "8-128 characters: letters, digits and . _ : - (e.g. a UUID you generate per call)"
)
# the characters after the first (a letter or digit) of a project name and of a tag
PROJECT_CHARS = "._-"
TAG_CHARS = "._:/+#-"


def name_pattern(chars: str, longest: int, *, upper: bool = False) -> str:
    """The allowlist of a name: a letter or digit, then letters, digits and ``chars``; ``upper``
    also admits upper case (what a caller may send: the name is lower-cased before the check),
    the form a tool schema states."""
    alnum = "A-Za-z0-9" if upper else "a-z0-9"
    return f"^[{alnum}][{alnum}{chars}]{{0,{longest - 1}}}$"


PROJECT_RE = re.compile(name_pattern(PROJECT_CHARS, MAX_PROJECT))
TAG_RE = re.compile(name_pattern(TAG_CHARS, MAX_TAG_LEN))
PROJECT_RULE = (
    "1-64 characters: a-z, 0-9, '.', '_', '-', starting with a letter or digit (e.g. 'kenning-api')"
)
# Stored times are bounded so every one reads back as a date in any zone: year 1 or 9999 shifted by
# a zone offset is outside what ``datetime`` can represent (docs/reliability.md).
EARLIEST = datetime(1900, 1, 1, tzinfo=UTC).timestamp()
LATEST = datetime(9000, 1, 1, tzinfo=UTC).timestamp()
EPOCH_RE = re.compile(r"^[+-]?(?:\d{9,}(?:\.\d*)?|\d+\.\d*)$")
DATE_HINT = (
    "use ISO 8601 (e.g. 2026-03-14 or 2026-03-14T09:30:00Z) or epoch seconds, "
    "from 1900-01-01 up to 8999-12-31 UTC"
)
TAG_RULE = (
    "1-100 characters: a-z, 0-9 and . _ : / + # -, starting with a letter or "
    "digit (e.g. 'python', 'ci/cd')"
)


def content(text: str, *, limit: int = MAX_CONTENT) -> str:
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput(
            "content is empty", hint="give the memory as a non-empty sentence or paragraph"
        )
    if len(text) > limit:
        raise InvalidInput(
            f"content is {len(text):,} characters; the limit is {limit:,}",
            hint=(
                "summarise it, split it into separate memories, or use "
                "remember_document for long text"
            ),
        )
    if not visible(text):
        raise InvalidInput(
            f"content has no visible character: its {len(text):,} characters are all "
            "invisible (NULs, zero-width spaces, control characters, blanks)",
            hint="give the memory as readable text; nothing was stored",
        )
    return text.strip()


# Unicode categories that show nothing: controls (NUL, ESC...), format characters (zero-width
# space and joiners, BOM, direction marks), separators (spaces, line and paragraph breaks).
INVISIBLE = frozenset(("Cc", "Cf", "Zs", "Zl", "Zp"))


def visible(text: str) -> bool:
    """Whether ``text`` has at least one character that shows (stops at the first). Pure."""
    return any(unicodedata.category(ch) not in INVISIBLE for ch in text)


def project(name: str | None) -> str:
    if name is None or name == "":
        return GLOBAL_PROJECT
    normal = name.strip().lower()
    if not PROJECT_RE.match(normal):
        raise InvalidInput(f"project name {quote(name)} is not allowed", hint=PROJECT_RULE)
    return normal


def projects(names: list[str] | tuple[str, ...] | str | None) -> tuple[str, ...]:
    if names is None:
        return ()
    items = [names] if isinstance(names, str) else list(names)
    if len(items) > 50:
        raise InvalidInput("too many projects in one filter", hint="name at most 50")
    return tuple(dict.fromkeys(project(n) for n in items))


def tag(value: str) -> str:
    normal = value.strip().lower()
    if not TAG_RE.match(normal):
        raise InvalidInput(f"tag {quote(value)} is not allowed", hint=TAG_RULE)
    return normal


def tags(values: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    if not values:
        return ()
    if len(values) > MAX_TAGS:
        raise InvalidInput(
            f"{len(values)} tags given; at most {MAX_TAGS}", hint="keep the most specific tags"
        )
    return tuple(dict.fromkeys(tag(v) for v in values))


def namespace(name: str) -> str:
    if name not in NAMESPACES:
        raise InvalidInput(
            f"unknown namespace {quote(name)}", hint=f"use one of {', '.join(NAMESPACES)}"
        )
    return name


def namespaces(names: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    if not names:
        return NAMESPACES
    return tuple(dict.fromkeys(namespace(n) for n in names))


def reason(text: str | None, *, required: bool = False) -> str | None:
    if text is None or not text.strip():
        if required:
            raise InvalidInput("a reason is required", hint="say in a sentence why")
        return None
    if len(text) > MAX_REASON:
        raise InvalidInput(f"reason is {len(text)} characters; the limit is {MAX_REASON}")
    return text.strip()


def actor(name: str) -> str:
    """Who an audit event names when a caller may choose it (``kenning import --actor``)."""
    normal = name.strip() if isinstance(name, str) else ""
    if not normal or len(normal) > MAX_ACTOR or not normal.isprintable():
        raise InvalidInput(
            f"actor {quote(name)} is not allowed",
            hint=f"1-{MAX_ACTOR} printable characters, e.g. 'import:alice'",
        )
    return normal


def bounded_int(name: str, value: int, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InvalidInput(
            f"{name} must be a whole number from {low} to {high}; got {quote(value)}"
        )
    return value


def timestamp(name: str, value: str | float | None) -> float | None:
    """An ISO 8601 date/time (UTC assumed when no zone) or epoch seconds -> epoch seconds, inside
    ``EARLIEST``..``LATEST``. Epoch seconds may come as a number or as a string of digits with a
    decimal point or of 9+ digits (8 digits read as an ISO basic date, e.g. 20260314)."""
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InvalidInput(f"{name} {quote(value)} is not a date", hint=DATE_HINT)
    if isinstance(value, int | float):
        return in_range(name, float(value))
    if not isinstance(value, str):
        raise InvalidInput(f"{name} {quote(value)} is not a date", hint=DATE_HINT)
    if EPOCH_RE.match(value.strip()):
        return in_range(name, float(value))
    try:
        parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        seconds = parsed.timestamp()
    except (ValueError, OverflowError):
        raise InvalidInput(f"{name} {quote(value)} is not a date", hint=DATE_HINT) from None
    return in_range(name, seconds)


def in_range(name: str, seconds: float) -> float:
    """Refuse a time outside ``EARLIEST``..``LATEST`` (or not finite): every stored time must read
    back as an ISO string, whatever zone it was given in."""
    if not math.isfinite(seconds) or not EARLIEST <= seconds < LATEST:
        raise InvalidInput(f"{name} is outside the dates Kenning stores", hint=DATE_HINT)
    return seconds


def key(value: str, prefix: str) -> str:
    from kenning.core.schema import namespace_of

    if not isinstance(value, str) or not namespace_of(value, prefix):
        raise InvalidInput(
            f"{quote(value)} is not a memory key",
            hint=f"keys look like {prefix}mem:<namespace>:<id>; copy one from recall or list",
        )
    return value


def idempotency_key(value: str, *, shortest: int = 8) -> str:
    """A caller's idempotency key (kenning.runtime.once); ``shortest`` is raised where the key
    also unlocks what the retry returns (a token's sealed secret, kenning.access.sealed)."""
    if not isinstance(value, str) or not IDEMPOTENCY_KEY_RE.match(value) or len(value) < shortest:
        rule = IDEMPOTENCY_KEY_RULE.replace("8-128", f"{shortest}-128")
        raise InvalidInput(f"idempotency key {quote(value)} is not allowed", hint=rule)
    return value
