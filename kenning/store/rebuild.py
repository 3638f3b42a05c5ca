"""Rebuilding the memory index in place, without a moment where searches have no index.

create a temporary index beside the live one -> wait for its backfill -> point the registry at it ->
drop the live index -> create it again under its canonical name -> backfill -> point the registry
back -> drop the temporary index. Hashes are never touched (FT.DROPINDEX without DD). The canonical
name is restored, so other processes (which derive the name from the schema fingerprint) keep
working; while the canonical index backfills they may briefly see partial results.
"""

from __future__ import annotations

from collections.abc import Callable

import valkey

from kenning.core import schema
from kenning.store.client import call
from kenning.store.indexes import IndexInfo, info, registry_key, wait_for_backfill


def _create(client: valkey.Valkey, name: str, prefix: str, dim: int) -> None:
    if info(client, name) is not None:
        call(client.execute_command, "FT.DROPINDEX", name)
    call(client.execute_command, *schema.create_args(name, schema.memory_prefix(prefix), dim))


def rebuild(
    client: valkey.Valkey,
    prefix: str,
    dim: int,
    *,
    timeout: float,
    switch: Callable[[str], None] | None = None,
) -> IndexInfo:
    """Rebuild the memory index; returns FT.INFO of the rebuilt canonical index.

    ``switch(name)`` is called whenever the live index changes, so the calling process searches the
    temporary index while the canonical one is rebuilt.
    """
    canonical = schema.index_name(prefix, dim)
    temporary = f"{canonical}:rebuild"
    _create(client, temporary, prefix, dim)
    wait_for_backfill(client, temporary, timeout)
    call(client.hset, registry_key(prefix), schema.INDEX, temporary)
    if switch is not None:
        switch(temporary)
    if info(client, canonical) is not None:
        call(client.execute_command, "FT.DROPINDEX", canonical)
    _create(client, canonical, prefix, dim)
    done = wait_for_backfill(client, canonical, timeout)
    call(client.hset, registry_key(prefix), schema.INDEX, canonical)
    if switch is not None:
        switch(canonical)
    call(client.execute_command, "FT.DROPINDEX", temporary)
    return done
