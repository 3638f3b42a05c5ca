"""What a forget keeps: each memory's fields (never its vector) until the retention window ends,
so a forgotten memory can be restored (kenning.truth.history)."""

from __future__ import annotations

from typing import Any

from kenning.core.models import Memory, iso
from kenning.runtime.context import Context

SNAPSHOT_FIELDS = (
    "content",
    "namespace",
    "project",
    "tags",
    "kind",
    "state",
    "trust",
    "title",
    "source",
    "created_at",
    "updated_at",
    "valid_from",
    "valid_to",
    "event_date",
    "expires_at",
    "weight",
    "experience_weight",
    "metadata",
    "source_key",
    "doc_id",
    "chunk_index",
    "actor",
    "superseded_by",
    "state_reason",
    "state_actor",
    "reinstate_hints",
    "recall_count",
    "last_recalled",
)


def keep_snapshots(ctx: Context, memories: list[Memory]) -> dict[str, Any]:
    """Keep each memory's fields (never the vector) until the retention window ends; return the
    marker the forget's audit event carries instead of the content."""
    days = ctx.settings.forget_retention_days
    ctx.store.snapshots.keep({m.key: snapshot_of(m) for m in memories}, ttl_seconds=days * 86_400)
    return {"kept": True, "kept_until": iso(ctx.clock.now() + days * 86_400)}


def snapshot_of(memory: Memory) -> dict[str, Any]:
    public = memory.public()
    return {name: public[name] for name in SNAPSHOT_FIELDS if name in public}
