"""A store written before issue 38's byte cuts keeps working: its index is rebuilt to the smaller
schema and its hashes (with the stored checksum they carried) read, list, sort and change."""

from __future__ import annotations

from typing import Any

import valkey

from kenning.core import schema
from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.listing import Listing
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.runtime.embedding import Embedder
from kenning.store import indexes as index_admin

FACTS = [f"Queue {n} drains into bucket b{n} every {n + 2} minutes" for n in range(12)]
TAGS = ("project", "tags", "kind", "namespace", "state", "trust", "actor", "source_key", "doc_id")
NUMBERS = ("created_at", "updated_at", "valid_from", "valid_to", "event_date", "expires_at")
COUNTERS = ("recall_count", "last_recalled", "weight", "experience_weight")
SORTED = ("created_at", "updated_at", "recall_count", "last_recalled")


def _previous_index(client: valkey.Valkey, prefix: str) -> str:
    """The one index as the schema before issue 38 declared it: every field but the stored ones
    indexed, four SORTABLE numbers, term offsets and stems kept."""
    body = ["content", "TEXT"]
    for name in TAGS:
        body += [name, "TAG", "SEPARATOR", ","]
    for name in (*NUMBERS, *COUNTERS):
        body += [name, "NUMERIC", *(["SORTABLE"] if name in SORTED else [])]
    vector = ["vector", "VECTOR", "HNSW", "6", "TYPE", "FLOAT32", "DIM", "384"]
    name = f"{prefix}idx:{schema.INDEX}:before38"
    client.execute_command(  # type: ignore[no-untyped-call]
        "FT.CREATE",
        name,
        "ON",
        "HASH",
        "PREFIX",
        "1",
        schema.memory_prefix(prefix),
        "SCHEMA",
        *body,
        *vector,
        "DISTANCE_METRIC",
        "COSINE",
    )
    client.hset(index_admin.registry_key(prefix), schema.INDEX, name)
    return name


def _field(client: valkey.Valkey, key: str, name: str) -> str | None:
    raw: Any = client.hget(key, name)
    return None if raw is None else bytes(raw).decode()


def test_a_store_of_the_previous_layout_upgrades_and_keeps_working(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    first = Engine.open(settings, client, embedder, clock=clock)
    keys = []
    for text in FACTS:
        keys.append(first.memories.remember(Draft(text, project="q"), actor="t").key)
        clock.advance(60)
    assert _field(client, keys[0], "content_sha") is None  # the new layout derives it
    old_sha = schema.content_sha(FACTS[0])
    for key, text in zip(keys, FACTS, strict=True):  # as the previous layout wrote them
        client.hset(key, "content_sha", schema.content_sha(text))
    index_admin.drop(client, settings.key_prefix)
    old = _previous_index(client, settings.key_prefix)
    assert index_admin.wait_for_backfill(client, old, 60).num_docs == len(FACTS)

    upgraded = Engine.open(settings, client, embedder, clock=clock)

    assert index_admin.info(client, old) is None
    info = index_admin.info(client, upgraded.ctx.index)
    assert info is not None
    assert info.num_docs == len(FACTS)
    assert upgraded.memories.get(keys[0]).content_sha == old_sha
    clock.advance(60)
    changed = upgraded.memories.update(keys[0], "Queue 0 drains into bucket z0 hourly", actor="t")
    assert changed.content_sha == schema.content_sha("Queue 0 drains into bucket z0 hourly")
    assert _field(client, keys[0], "content_sha") is None  # the stale copy went with its content
    newest = upgraded.memories.list(Listing(sort="updated_at", descending=True, limit=3))
    assert [m.key for m in newest.items] == [keys[0], keys[-1], keys[-2]]
    oldest = upgraded.memories.list(Listing(sort="updated_at", descending=False, limit=2))
    assert [m.key for m in oldest.items] == [keys[1], keys[2]]
    hits = upgraded.recaller.recall(RecallRequest("where does queue 7 drain into?", top_k=3)).hits
    assert keys[7] in {h.memory.key for h in hits}
