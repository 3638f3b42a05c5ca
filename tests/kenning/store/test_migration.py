"""Index migration at start-up: a populated store upgrades without losing a memory from search."""

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

FACTS = [
    f"Service {n} listens on port {8000 + n} and logs to /var/log/svc{n}.log" for n in range(40)
]


def _old_index(client: valkey.Valkey, prefix: str, namespace: str) -> str:
    """An index as an older Kenning declared it: fewer fields, another name."""
    name = f"{prefix}idx:{namespace}:oldschema1"
    client.execute_command(  # type: ignore[no-untyped-call]
        "FT.CREATE",
        name,
        "ON",
        "HASH",
        "PREFIX",
        "1",
        schema.key_prefix(prefix, namespace),
        "SCHEMA",
        "content",
        "TEXT",
        "project",
        "TAG",
        "SEPARATOR",
        ",",
        "created_at",
        "NUMERIC",
        "SORTABLE",
        "vector",
        "VECTOR",
        "HNSW",
        "6",
        "TYPE",
        "FLOAT32",
        "DIM",
        "384",
        "DISTANCE_METRIC",
        "COSINE",
    )
    client.hset(index_admin.registry_key(prefix), namespace, name)
    return name


def _hash(client: valkey.Valkey, key: str) -> dict[bytes, bytes]:
    raw: Any = client.hgetall(key)
    return dict(raw)


def _per_namespace_layout(client: valkey.Valkey, prefix: str) -> dict[str, str]:
    """The five indexes the per-namespace layout created (every declared field but ``namespace``,
    which it kept unindexed, over one namespace's key prefix each) and their registry entries."""
    names: dict[str, str] = {}
    for namespace in schema.NAMESPACES:
        name = f"{prefix}idx:{namespace}:perns00001"
        args = schema.create_args(name, schema.key_prefix(prefix, namespace), 384)
        at = args.index("namespace")
        del args[at : at + 4]  # "namespace TAG SEPARATOR ,"
        client.execute_command(*args)  # type: ignore[no-untyped-call]
        client.hset(index_admin.registry_key(prefix), namespace, name)
        names[namespace] = name
    return names


def test_changed_fingerprint_migrates_a_populated_store(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    first = Engine.open(settings, client, embedder, clock=clock)
    keys = [
        first.memories.remember(Draft(text, project="svc"), actor="t", allow_duplicate=True).key
        for text in FACTS
    ]
    assert len(set(keys)) == len(FACTS)
    index_admin.drop(client, settings.key_prefix)
    old = _old_index(client, settings.key_prefix, "knowledge")
    assert index_admin.wait_for_backfill(client, old, 60).num_docs == len(FACTS)

    upgraded = Engine.open(settings, client, embedder, clock=clock)

    new = upgraded.ctx.index
    assert new != old
    assert index_admin.info(client, old) is None
    assert index_admin.info(client, new).num_docs == len(FACTS)  # type: ignore[union-attr]
    page = upgraded.memories.list(Listing(namespaces=["knowledge"], limit=100))
    assert {m.key for m in page.items} == set(keys)
    hit = upgraded.recaller.recall(RecallRequest("which port does service 17 listen on?", top_k=3))
    assert any("Service 17 " in h.memory.content for h in hit.hits)


def test_the_per_namespace_layout_upgrades_to_one_index(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    prefix = settings.key_prefix
    first = Engine.open(settings, client, embedder, clock=clock)
    spread = {
        ns: [
            first.memories.remember(
                Draft(f"{text} ({ns})", namespace=ns, project="svc"),
                actor="t",
                allow_duplicate=True,
            ).key
            for text in FACTS[:8]
        ]
        for ns in ("episodic", "knowledge", "preference")
    }
    keys = [k for group in spread.values() for k in group]
    unlabelled = spread["episodic"][:3]
    # hashes a writer left without the field: the migration derives it from the key
    for key in unlabelled:
        client.hdel(key, "namespace")
    index_admin.drop(client, prefix)
    old = _per_namespace_layout(client, prefix)
    # the old layout serves
    assert index_admin.wait_for_backfill(client, old["episodic"], 60).num_docs == 8
    before = {key: _hash(client, key) for key in keys}

    upgraded = Engine.open(settings, client, embedder, clock=clock)

    assert index_admin.live_indexes(client, prefix) == {schema.INDEX: upgraded.ctx.index}
    assert [name for name in old.values() if index_admin.info(client, name) is not None] == []
    assert index_admin.info(client, upgraded.ctx.index).num_docs == len(keys)  # type: ignore[union-attr]
    for key in keys:  # every hash intact; the unlabelled ones gained only their namespace
        after = _hash(client, key)
        assert {k: after[k] for k in before[key]} == before[key]
        assert {k: v for k, v in after.items() if k not in before[key]} == (
            {b"namespace": b"episodic"} if key in unlabelled else {}
        )
    for ns, group in spread.items():
        page = upgraded.memories.list(Listing(namespaces=[ns], limit=100))
        assert {m.key for m in page.items} == set(group)
    hits = upgraded.recaller.recall(
        RecallRequest("which port does service 3 listen on?", top_k=20, namespaces=["episodic"])
    ).hits
    assert spread["episodic"][3] in {h.memory.key for h in hits}
    assert {h.memory.namespace for h in hits} == {"episodic"}


def test_reopening_with_the_same_schema_keeps_the_index(
    settings: Settings, client: valkey.Valkey, embedder: Embedder
) -> None:
    first = Engine.open(settings, client, embedder)
    second = Engine.open(settings, client, embedder)
    assert first.ctx.indexes == second.ctx.indexes
    assert set(first.ctx.indexes) == {schema.INDEX}
