"""Index lifecycle: create, migrate on a changed fingerprint, inspect, and the embedding-model pin.

One index covers every memory hash (``{prefix}mem:``, any namespace; ``namespace`` is a TAG field).
The registry hash ``{prefix}meta:indexes`` maps ``schema.INDEX`` to its live name. A changed schema
fingerprint (or a store with the old layout of one index per namespace) creates the new index beside
the old ones, waits until it has backfilled the existing hashes, switches the registry, and only
then drops the old indexes (FT.DROPINDEX without DD, so no hash is deleted).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Any

import valkey

from kenning.core import schema
from kenning.core.errors import BackendUnavailable, EmbeddingMismatch, StoreError
from kenning.store import layout, shards
from kenning.store.client import call, guarded, index_exists_already, index_missing, text

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class IndexInfo:
    name: str
    num_docs: int
    indexing: bool
    percent_indexed: float
    attributes: tuple[str, ...]


def rebuild_key(prefix: str) -> str:
    """While a rebuild runs: the index it builds and how many memories it must hold."""
    return f"{prefix}index:rebuild"


def registry_key(prefix: str) -> str:
    return f"{prefix}meta:indexes"


def parse_info(name: str, reply: Any) -> IndexInfo:
    """FT.INFO is a flat key/value list whose content differs between
    modules: read only what we need."""
    flat = list(reply) if isinstance(reply, list | tuple) else []
    data: dict[str, Any] = {text(flat[i]): flat[i + 1] for i in range(0, len(flat) - 1, 2)}
    attributes: list[str] = []
    for entry in data.get("attributes", []) or []:
        pairs = {text(entry[i]): entry[i + 1] for i in range(0, len(entry) - 1, 2)}
        attributes.append(text(pairs.get("attribute", pairs.get("identifier", ""))))
    indexing = _flag(data.get("indexing", data.get("backfill_in_progress", 0)))
    percent = _float(data.get("percent_indexed", data.get("backfill_complete_percent", 1.0)))
    if percent > 1.0:  # valkey-search reports a percentage
        percent /= 100.0
    # RediSearch has read values like 2492 during a rescan: a share is never above one
    percent = min(max(percent, 0.0), 1.0)
    return IndexInfo(
        name=name,
        num_docs=int(_float(data.get("num_docs", 0))),
        indexing=indexing,
        percent_indexed=percent,
        attributes=tuple(attributes),
    )


def _flag(value: Any) -> bool:
    return text(value).strip().lower() not in ("0", "", "false", "no")


def _float(value: Any) -> float:
    try:
        return float(text(value))
    except ValueError:
        return 0.0


def info(client: valkey.Valkey, name: str) -> IndexInfo | None:
    """FT.INFO of an index, or None when it does not exist. On a cluster FT.INFO asks every shard
    (``layout.info_reply``), so a shard down fails it like a search, named (kenning.store.shards):
    the node it was sent to may time out waiting for the dead one, and that node is not the one
    to start again."""
    try:
        with guarded():
            reply = layout.info_reply(client, name)
    except (StoreError, BackendUnavailable) as exc:
        if index_missing(exc):
            return None
        better = shards.explained(client, exc)
        if better is exc:
            raise
        raise better from exc
    return parse_info(name, reply)


def live_indexes(client: valkey.Valkey, prefix: str) -> dict[str, str]:
    raw = call(client.hgetall, registry_key(prefix))
    return {text(k): text(v) for k, v in raw.items()}


def ensure(
    client: valkey.Valkey, prefix: str, dim: int, *, timeout: float = 300.0
) -> dict[str, str]:
    """Make the memory index current; returns the registry (``schema.INDEX`` -> its name).

    A store made with an older layout (one index per namespace, or an older fingerprint) is
    migrated: every memory hash gets its ``namespace`` field if it lacks one, the new index is
    created and backfilled, the registry switched, and only then is every other index the registry
    lists dropped (never the hashes).
    """
    live = live_indexes(client, prefix)
    wanted = schema.index_name(prefix, dim)
    current = live.get(schema.INDEX, "")
    if current != wanted and schema.is_current(current, prefix, dim) and info(client, current):
        wanted = current  # a rebuilt generation of this schema (kenning.store.rebuild) stays live
    elif info(client, wanted) is None:
        label_namespaces(client, prefix)
        _create(client, wanted, schema.memory_prefix(prefix), dim)
        wait_for_backfill(client, wanted, timeout)
    call(client.hset, registry_key(prefix), schema.INDEX, wanted)
    for field, old in live.items():
        if old == wanted:
            continue
        if info(client, old) is not None:
            log.info("index migration: %s -> %s, dropping the old index", old, wanted)
            call(client.execute_command, "FT.DROPINDEX", old)
        if field != schema.INDEX:
            call(client.hdel, registry_key(prefix), field)
    return {schema.INDEX: wanted}


# Sets a memory hash's namespace only when the hash still exists and has none: a key deleted between
# SCAN and this script is not brought back as a one-field hash. One key per script (cluster-safe).
_LABEL = """
if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('HEXISTS', KEYS[1], 'namespace') == 0 then
  redis.call('HSET', KEYS[1], 'namespace', ARGV[1])
  return 1
end
return 0
"""


def label_namespaces(client: valkey.Valkey, prefix: str, *, batch: int = 500) -> int:
    """Give every memory hash without a ``namespace`` field the one its key names (hashes written
    before the field was indexed may lack it); returns how many were labelled. Runs before
    the one index is created."""
    labelled = 0
    keys: list[str] = []
    with guarded():
        for raw in client.scan_iter(match=schema.memory_prefix(prefix) + "*", count=1000):
            key = text(raw)
            if schema.namespace_of(key, prefix):
                keys.append(key)
            if len(keys) >= batch:
                labelled += _label(client, prefix, keys)
                keys = []
    return labelled + (_label(client, prefix, keys) if keys else 0)


def _label(client: valkey.Valkey, prefix: str, keys: list[str]) -> int:
    pipe = client.pipeline(transaction=False)
    for key in keys:
        label = ("EVAL", _LABEL, 1, key, schema.namespace_of(key, prefix))
        pipe.execute_command(*label)  # type: ignore[no-untyped-call]
    return sum(int(n) for n in call(pipe.execute, raise_on_error=True))


def _create(client: valkey.Valkey, name: str, key_prefix: str, dim: int) -> None:
    try:
        call(client.execute_command, *schema.create_args(name, key_prefix, dim))
    except StoreError as exc:
        if not index_exists_already(exc):
            raise


def wait_for_backfill(client: valkey.Valkey, name: str, timeout: float) -> IndexInfo:
    """Poll FT.INFO until the index has backfilled: first after 5 ms (a new, empty index is ready
    within a few on valkey-search), backing off to every 50 ms (a big one takes seconds)."""
    deadline = time.monotonic() + timeout
    pause = 0.005
    while True:
        current = info(client, name)
        if current is None:
            raise BackendUnavailable(f"index {name} vanished while backfilling")
        if not current.indexing and current.percent_indexed >= 1.0:
            return current
        if time.monotonic() > deadline:
            raise BackendUnavailable(
                f"index {name} did not finish backfilling within {timeout:.0f}s"
            )
        time.sleep(pause)
        pause = min(pause * 2, 0.05)


def drop(client: valkey.Valkey, prefix: str) -> None:
    """Drop this prefix's indexes (never the hashes) and forget the registry (tests, reindex)."""
    for name in live_indexes(client, prefix).values():
        if info(client, name) is not None:
            call(client.execute_command, "FT.DROPINDEX", name)
    call(client.delete, registry_key(prefix))


def pinned_model(client: valkey.Valkey, prefix: str) -> str | None:
    """The model that wrote this store's vectors, or None for a store that has none yet."""
    value = call(client.hget, f"{prefix}meta:embedding", "model")
    return None if value is None else text(value)


def pin_model(client: valkey.Valkey, prefix: str, model: str, dim: int) -> None:
    """Record which model writes this store's vectors; refuse a different model or dimension."""
    meta = f"{prefix}meta:embedding"
    call(client.hsetnx, meta, "model", model)
    call(client.hsetnx, meta, "dim", str(dim))
    stored = {text(k): text(v) for k, v in call(client.hgetall, meta).items()}
    if stored.get("model") != model or stored.get("dim") != str(dim):
        raise EmbeddingMismatch(
            f"this store's vectors were written by {stored.get('model')} ({stored.get('dim')} "
            f"dims); the loaded model is {model} ({dim} dims)",
            hint="set KENNING_EMBEDDING_MODEL back, or back up, wipe and restore to re-embed",
        )
