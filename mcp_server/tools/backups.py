"""Backup, restore and reindex tools (docs/backup.md): admin scope, file names only (no paths)."""

from __future__ import annotations

from typing import Any

from mcp_server.registry import tool
from mcp_server.runtime import current


@tool(scope="admin")
async def backup(
    vectors: bool = False, label: str | None = None, idempotency_key: str | None = None
) -> dict[str, Any]:
    """Write a JSON backup (memories, suppressions, contradiction
    records) to the backup directory. idempotency_key: a retry with it returns the same file."""
    call = current()
    return (
        await call.run(
            call.engine.backups.backup,
            vectors=vectors,
            label=label,
            actor=call.actor,
            idempotency_key=idempotency_key,
        )
    ).public()


@tool(scope="admin", read_only=True)
async def list_backups() -> dict[str, Any]:
    """Backup files in the backup directory, newest first (names to pass to restore)."""
    call = current()
    return {"backups": [b.public() for b in await call.run(call.engine.backups.list_backups)]}


@tool(scope="admin", destructive=True)
async def restore(file: str, dry_run: bool = True) -> dict[str, Any]:
    """Restore a backup by file name. dry_run (default) reports what would be added, updated (newer
    updated_at wins) or skipped, and why; dry_run=false applies it (audited)."""
    call = current()
    return (
        await call.run(call.engine.backups.restore_file, file, dry_run=dry_run, actor=call.actor)
    ).public()


@tool(scope="admin", idempotent=True, destructive=True)
async def reindex() -> dict[str, Any]:
    """Rebuild the memory search index (every namespace) safely (new index,
    backfill, swap, drop old)."""
    call = current()
    return (await call.run(call.engine.maintenance.reindex, actor=call.actor)).public()
