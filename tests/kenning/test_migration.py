"""Index migration at start-up: a populated store upgrades without losing a memory from search."""

from __future__ import annotations

import valkey

from kenning import schema
from kenning.clock import ManualClock
from kenning.embedding import Embedder
from kenning.engine import Engine
from kenning.memory import Draft, Listing
from kenning.recall import RecallRequest
from kenning.settings import Settings
from kenning.store import indexes as index_admin

FACTS = [f"Service {n} listens on port {8000 + n} and logs to /var/log/svc{n}.log" for n in range(40)]


def _old_index(client: valkey.Valkey, prefix: str, namespace: str) -> str:
    """An index as an older Kenning declared it: fewer fields, another name."""
    name = f"{prefix}idx:{namespace}:oldschema1"
    client.execute_command(  # type: ignore[no-untyped-call]
        "FT.CREATE", name, "ON", "HASH", "PREFIX", "1", schema.key_prefix(prefix, namespace), "SCHEMA",
        "content", "TEXT", "project", "TAG", "SEPARATOR", ",", "created_at", "NUMERIC", "SORTABLE",
        "vector", "VECTOR", "HNSW", "6", "TYPE", "FLOAT32", "DIM", "384", "DISTANCE_METRIC", "COSINE")
    client.hset(index_admin.registry_key(prefix), namespace, name)
    return name


def test_changed_fingerprint_migrates_a_populated_store(
        settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock) -> None:
    first = Engine.open(settings, client, embedder, clock=clock)
    keys = [first.memories.remember(Draft(text, project="svc"), actor="t", allow_duplicate=True).key
            for text in FACTS]
    assert len(set(keys)) == len(FACTS)
    index_admin.drop(client, settings.key_prefix)
    old = _old_index(client, settings.key_prefix, "knowledge")
    assert index_admin.wait_for_backfill(client, old, 60).num_docs == len(FACTS)

    upgraded = Engine.open(settings, client, embedder, clock=clock)

    new = upgraded.ctx.index("knowledge")
    assert new != old
    assert index_admin.info(client, old) is None
    assert index_admin.info(client, new).num_docs == len(FACTS)  # type: ignore[union-attr]
    page = upgraded.memories.list(Listing(namespaces=["knowledge"], limit=100))
    assert {m.key for m in page.items} == set(keys)
    hit = upgraded.recaller.recall(RecallRequest("which port does service 17 listen on?", top_k=3))
    assert any("Service 17 " in h.memory.content for h in hit.hits)


def test_reopening_with_the_same_schema_keeps_the_index(
        settings: Settings, client: valkey.Valkey, embedder: Embedder) -> None:
    first = Engine.open(settings, client, embedder)
    second = Engine.open(settings, client, embedder)
    assert first.ctx.indexes == second.ctx.indexes
    assert set(first.ctx.indexes) == set(schema.NAMESPACES)
