"""Value objects of the memory model. No I/O."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from datetime import UTC, datetime
from typing import Any, Literal

STATES: tuple[str, ...] = ("active", "deprioritised", "archived")
# "derived": written by the LLM extras from another memory (below "stated": no person said it)
TRUST_LEVELS: tuple[str, ...] = ("stated", "verified", "disputed", "superseded", "derived")
DERIVED = "derived"
FEED_KIND = "article"  # what the feed ingest stores each entry as
# the actor of facts the LLM extracted from a feed article: excluded with the feeds
FEED_DERIVED_ACTOR = "llm:enrichment:feed"
STATE_WEIGHTS: dict[str, float] = {"active": 1.0, "deprioritised": 0.2, "archived": 0.0}
GLOBAL_PROJECT = "global"
INVALID_DATE = "invalid date"


def iso(ts: float | None) -> str | None:
    """Epoch seconds -> ISO 8601 UTC (seconds precision), or None.

    Never raises: a time no ``datetime`` can hold (written before dates were bounded, or by hand)
    reads back as ``"invalid date (<seconds>)"``, so one bad row cannot stop a listing, a delete
    or a maintenance pass (docs/reliability.md)."""
    if ts is None:
        return None
    try:
        return (
            datetime.fromtimestamp(ts, tz=UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
        )
    except (ValueError, OverflowError, OSError):
        return f"{INVALID_DATE} ({ts!r})"


@dataclass(frozen=True)
class Memory:
    """One memory hash. Times are epoch seconds; ``None`` means "not set" and is not stored."""

    key: str
    content: str = ""
    namespace: str = ""
    project: str = GLOBAL_PROJECT
    tags: tuple[str, ...] = ()
    kind: str = "memory"
    state: str = "active"
    trust: str = "stated"
    actor: str = ""
    source_key: str | None = None
    doc_id: str | None = None
    created_at: float = 0.0
    updated_at: float = 0.0
    valid_from: float | None = None
    valid_to: float | None = None
    event_date: float | None = None
    expires_at: float | None = None
    recall_count: int = 0
    last_recalled: float | None = None
    weight: float = 1.0
    experience_weight: float = 1.0
    title: str | None = None
    source: str | None = None
    chunk_index: int | None = None
    superseded_by: str | None = None
    state_reason: str | None = None
    state_actor: str | None = None
    state_changed_at: float | None = None
    content_sha: str | None = None
    reinstate_hints: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    def public(self) -> dict[str, Any]:
        """Every field as plain JSON-ready data, times as ISO strings."""
        data = asdict(self)
        for name in (
            "created_at",
            "updated_at",
            "valid_from",
            "valid_to",
            "event_date",
            "expires_at",
            "last_recalled",
            "state_changed_at",
        ):
            data[name] = iso(data[name])
        data["tags"] = list(self.tags)
        data["reinstate_hints"] = list(self.reinstate_hints)
        return data


@dataclass(frozen=True, slots=True)
class Stale:
    """An open value change flags an older statement: the newer key, the
    contradiction, the slot, both values."""

    newer: str
    contradiction: str
    slot: Any
    old_value: Any
    new_value: Any


@dataclass(frozen=True)
class RecallHit:
    """One recall result: the memory, its raw similarity and its final score."""

    memory: Memory
    similarity: float
    score: float
    weak_match: bool = False
    reinstate_candidate: bool = False
    factors: dict[str, float] = field(default_factory=dict)
    stale: Stale | None = (
        None  # an open value change names a newer statement (kenning.memory.staleness)
    )

    def public(self, *, full: bool = True) -> dict[str, Any]:
        m = self.memory
        out: dict[str, Any] = {
            "key": m.key,
            "namespace": m.namespace,
            "score": round(self.score, 4),
            "similarity": round(self.similarity, 4),
            "project": m.project,
            "tags": list(m.tags),
            "created_at": iso(m.created_at),
            "state": m.state,
            "trust": m.trust,
        }
        if full:
            out["content"] = m.content
        if self.weak_match:
            out["weak_match"] = True
        if self.reinstate_candidate:
            out["reinstate_candidate"] = True
        if self.stale is not None:
            out["possibly_stale"] = asdict(self.stale)
        if m.superseded_by:
            out["superseded_by"] = m.superseded_by
        for name in ("title", "doc_id", "chunk_index"):  # where a document chunk came from
            value = getattr(m, name)
            if value is not None:
                out[name] = value
        return out


NoteKind = Literal["contradiction", "suppressed", "duplicate", "refreshed", "replayed", "said"]
NOTE_KINDS: tuple[NoteKind, ...] = (
    "contradiction",
    "suppressed",
    "duplicate",
    "refreshed",
    "replayed",
    "said",
)


@dataclass(frozen=True, slots=True)
class Note:
    """A fact remember reports, by kind; the MCP door words it for an agent (mcp_server/shape.py).

    contradiction: ``other`` and ``contradiction`` (opened, both now disputed); suppressed: ``term``
    and ``reason`` of a suppression hiding the new memory; duplicate: the memory matched (``key``,
    ``state``, the first words of its ``content``; none of them from a bulk write); refreshed: its
    new ``event_date``; replayed: an earlier call with this idempotency key stored it; said: a
    sentence as an older reply kept it.
    """

    kind: NoteKind
    other: str | None = None
    contradiction: str | None = None
    term: str | None = None
    reason: str | None = None
    key: str | None = None
    state: str | None = None
    content: str | None = None
    event_date: str | None = None
    text: str | None = None

    def public(self) -> dict[str, Any]:
        return {name: value for name, value in asdict(self).items() if value is not None}

    @staticmethod
    def parse(raw: object) -> Note:
        """A note as a stored reply keeps it: its fields, or (a reply kept before
        notes had kinds) a sentence."""
        if isinstance(raw, str):
            return Note("said", text=raw)
        kind = next((k for k in NOTE_KINDS if isinstance(raw, dict) and raw.get("kind") == k), None)
        if kind is None or not isinstance(raw, dict):
            raise ValueError(f"not a stored remember note: {raw!r}"[:200])
        return Note(
            kind,
            **{
                f.name: str(raw[f.name]) for f in fields(Note) if f.name != "kind" and f.name in raw
            },
        )


@dataclass(frozen=True)
class RememberResult:
    """What remember did: ``stored`` a new key, or found a ``duplicate`` and returned its key.

    ``public()`` is the plain form an idempotent reply is kept in (notes as their fields); the MCP
    door words the notes (mcp_server/shape.py ``remembered``).
    """

    status: str
    key: str
    similarity: float | None = None
    notes: tuple[Note, ...] = ()

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.status, "key": self.key}
        if self.similarity is not None:
            out["similarity"] = round(self.similarity, 4)
        if self.notes:
            out["notes"] = [n.public() for n in self.notes]
        return out


@dataclass(frozen=True)
class Page:
    """A page of memories from a listing, with the total the filter matched."""

    items: tuple[Memory, ...]
    total: int
    offset: int
    limit: int
