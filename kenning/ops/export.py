"""The lossless export (`kenning export`, docs/backup.md "Export"): every memory as one JSON line
another system can read — the fields of `kenning import` (content, namespace, project, tags,
title, source, event_date, valid_from, expires_at) — plus, under ``"kenning"``, the whole record
(key, kind, state, trust, valid time, links, counters: the hash fields as the store writes them).

`kenning import FILE` reads the readable fields of such a file like any other; `kenning import
--from kenning FILE` restores the whole records (through the backup's plan: merged by updated_at, a
dry run first, vectors embedded again), so export -> import into a fresh store gives the same
memories field by field. Pure: the caller reads the store and writes the file.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from kenning.core.errors import InvalidInput
from kenning.core.models import Memory, iso
from kenning.core.schema import FIELD_NAMES, decode, encode, namespace_of

FORMAT = "kenning-export"
VERSION = 1
READABLE = ("content", "namespace", "project", "tags", "title", "source")
TIMES = ("event_date", "valid_from", "expires_at")


def row(memory: Memory, prefix: str) -> dict[str, Any]:
    """One memory's line: the readable fields and the full record."""
    out: dict[str, Any] = {name: getattr(memory, name) for name in READABLE}
    out["tags"] = list(memory.tags)
    out.update({name: iso(getattr(memory, name)) for name in TIMES})
    out = {k: v for k, v in out.items() if v not in (None, "", [])}
    out["kenning"] = {
        "format": FORMAT,
        "version": VERSION,
        "prefix": prefix,
        "key": memory.key,
        "fields": encode(memory),
    }
    return out


def lines(memories: Iterable[Memory], prefix: str) -> Iterator[str]:
    for memory in memories:
        yield json.dumps(row(memory, prefix), ensure_ascii=False, sort_keys=True) + "\n"


def as_backup(data: bytes, *, model: str, dim: int) -> dict[str, Any]:
    """An export file as the backup document the restore plans from; every line checked."""
    memories: list[dict[str, Any]] = []
    prefixes: set[str] = set()
    for number, raw in enumerate(data.splitlines(), start=1):
        if not raw.strip():
            continue
        record = _record(number, raw)
        prefixes.add(record["prefix"])
        memories.append({"key": record["key"], "fields": record["fields"]})
    if not memories:
        raise InvalidInput("the export holds no memories", hint="write one with kenning export")
    if len(prefixes) != 1:
        raise InvalidInput(f"the export mixes key prefixes ({', '.join(sorted(prefixes))})")
    return {
        "format": "kenning-backup",
        "version": 1,
        "created_at": None,
        "prefix": prefixes.pop(),
        "embedding": {"model": model, "dim": dim},
        "vectors": False,
        "memories": memories,
        "suppressions": [],
        "contradictions": [],
        "kept_apart": [],
        "project_contexts": [],
    }


def _record(number: int, raw: bytes) -> dict[str, Any]:
    try:
        item = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"line {number} is not JSON") from exc
    record = item.get("kenning") if isinstance(item, dict) else None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise InvalidInput(
            f"line {number} has no kenning record",
            hint="--from kenning reads files written by kenning export; import others plainly",
        )
    fields, key, prefix = record.get("fields"), record.get("key"), record.get("prefix")
    if not isinstance(fields, dict) or not isinstance(key, str) or not isinstance(prefix, str):
        raise InvalidInput(f"line {number}: its kenning record lacks key, prefix or fields")
    if not namespace_of(key, prefix) or not set(fields) <= set(FIELD_NAMES):
        raise InvalidInput(f"line {number}: {key} is not a memory key or has unknown fields")
    try:
        decode(key, fields)
    except (ValueError, TypeError) as exc:
        raise InvalidInput(f"line {number} ({key}) is malformed: {exc}") from exc
    return record
