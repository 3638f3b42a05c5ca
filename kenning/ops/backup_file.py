"""Reading and checking a backup file (kenning.ops.backup): the format and version, the whole file
read and every entry validated before anything is written, the seal (kenning.ops.seal) that refuses
a file changed after Kenning wrote it, and moving an entry's keys to this store's prefix and
deciding by updated_at. Pure but for reading the file.
"""

from __future__ import annotations

import base64
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from kenning.core import validation
from kenning.core.errors import InvalidInput, NotFound
from kenning.core.models import Memory, iso
from kenning.core.schema import FIELD_NAMES, decode, namespace_of
from kenning.memory.suppression import Suppression
from kenning.memory.suppression import term as suppression_term
from kenning.ops.seal import checksum
from kenning.store import STATUSES, Contradiction

FORMAT = "kenning-backup"
VERSION = 2  # 2: sealed with a checksum (kenning.ops.seal); 1 (no checksum) is still read
VERSIONS = (1, VERSION)
MB = 1024 * 1024
TIMES = (
    "created_at",
    "updated_at",
    "valid_from",
    "valid_to",
    "event_date",
    "expires_at",
    "last_recalled",
    "state_changed_at",
)
DAMAGED = (
    "nothing was written; the file is damaged or not a Kenning backup "
    "(list_backups shows the others)"
)


def load(path: Path, *, max_bytes: int) -> dict[str, Any]:
    """Read and validate a backup file completely; raise InvalidInput naming the first problem."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise NotFound(f"cannot read {path.name}: {exc.strerror}") from exc
    if size > max_bytes:
        raise InvalidInput(
            f"{path.name} is {size:,} bytes; the limit is {max_bytes:,}",
            hint="raise KENNING_RESTORE_MAX_MB if the file is trusted",
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(
            f"{path.name} is not valid JSON: {exc}", hint=f"was it cut short? {DAMAGED}"
        ) from exc
    try:
        check(data)
    except InvalidInput as exc:
        raise InvalidInput(f"{path.name}: {exc.message}", hint=exc.hint or DAMAGED) from exc
    verify(path.name, data)
    return dict(data)


def verify(name: str, data: dict[str, Any]) -> None:
    """Refuse a sealed backup whose content is not what was written (edited, or damaged in a way
    that still parses); a version 1 file was written before backups were sealed."""
    if data["version"] == 1:
        return
    found = data.get("checksum")
    if found != checksum(data):
        what = "has no checksum" if found is None else "does not match its checksum"
        raise InvalidInput(
            f"{name} {what}: it was changed after Kenning wrote it, so it is not restored",
            hint="restore an unedited backup (list_backups shows them); nothing was written",
        )


def check(data: Any) -> None:
    """Validate the parsed structure of a backup. Pure; raises InvalidInput."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InvalidInput("this is not a Kenning backup (no format marker)")
    if data.get("version") not in VERSIONS:
        raise InvalidInput(
            f"backup format version {data.get('version')!r} is not supported; this is {VERSION}"
        )
    embedding = data.get("embedding")
    if (
        not isinstance(data.get("prefix"), str)
        or not isinstance(embedding, dict)
        or not isinstance(embedding.get("dim"), int)
    ):
        raise InvalidInput("the backup header lacks its key prefix or embedding model")
    for name in ("memories", "suppressions", "contradictions"):
        if not isinstance(data.get(name), list):
            raise InvalidInput(f"the backup has no {name} list")
    for i, entry in enumerate(data["memories"]):
        _check_memory(i, entry, data["prefix"], embedding["dim"])
    for i, entry in enumerate(data["suppressions"]):
        _check_suppression(i, entry)
    for i, raw in enumerate(data["contradictions"]):
        _check_contradiction(i, raw, data["prefix"])
    kept_apart = data.get("kept_apart", [])
    if not isinstance(kept_apart, list):
        raise InvalidInput("the backup's kept_apart is not a list")
    for i, entry in enumerate(kept_apart):
        _check_kept_apart(i, entry, data["prefix"])


def _check_suppression(i: int, entry: Any) -> None:
    try:
        record = Suppression.from_record(entry["record"])
        if entry["term"] != suppression_term(entry["term"]) or record.term != entry["term"]:
            raise ValueError("the term is not in its normal form")
    except (KeyError, TypeError, ValueError, AttributeError, InvalidInput) as exc:
        raise InvalidInput(f"suppression #{i} is malformed: {exc}") from exc


def _check_kept_apart(i: int, entry: Any, prefix: str) -> None:
    pair = entry.get("pair") if isinstance(entry, dict) else None
    record = entry.get("record") if isinstance(entry, dict) else None
    keys = (
        isinstance(pair, list)
        and len(pair) == 2
        and all(isinstance(k, str) and namespace_of(k, prefix) for k in pair)
        and pair[0] != pair[1]
    )
    when = (
        isinstance(record, dict)
        and isinstance(record.get("at"), int | float)
        and not isinstance(record.get("at"), bool)
    )
    if not (keys and when):
        raise InvalidInput(
            f"kept_apart #{i} is malformed: it needs two memory keys of the backup's prefix "
            "and a record with its time"
        )


def _check_contradiction(i: int, raw: Any, prefix: str) -> None:
    if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
        raise InvalidInput(f"contradiction #{i} is malformed")
    try:
        record = Contradiction.decode(raw)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"contradiction #{i} is malformed: {exc}") from exc
    shaped = isinstance(record.prior, dict) and isinstance(record.evidence, dict)
    keys = bool(namespace_of(record.a, prefix) and namespace_of(record.b, prefix))
    if not (record.id.isalnum() and record.status in STATUSES and shaped and keys):
        raise InvalidInput(f"contradiction #{i} ({record.id!r}) has a bad id, status or memory key")


def _check_memory(i: int, entry: Any, prefix: str, dim: int) -> None:
    if not isinstance(entry, dict) or not isinstance(entry.get("fields"), dict):
        raise InvalidInput(f"memory #{i} is malformed")
    key = entry.get("key")
    if not isinstance(key, str) or not namespace_of(key, prefix):
        raise InvalidInput(f"memory #{i} has no valid key under the prefix {prefix!r}")
    fields = entry["fields"]
    if not all(
        isinstance(k, str) and k in FIELD_NAMES and isinstance(v, str) for k, v in fields.items()
    ):
        raise InvalidInput(f"memory #{i} ({key}) has unknown or non-text fields")
    try:
        memory = decode(key, fields)
        validation.content(memory.content)
        # a time no datetime can show would poison every listing after the restore
        for name in TIMES:
            value = getattr(memory, name)
            if value is not None:
                validation.in_range(name, value)
        vector = base64.b64decode(entry["vector"], validate=True) if "vector" in entry else b""
    except (ValueError, TypeError, InvalidInput) as exc:
        raise InvalidInput(f"memory #{i} ({key}) is malformed: {exc}") from exc
    if vector and len(vector) != dim * 4:
        raise InvalidInput(
            f"memory #{i} ({key}) has a vector of {len(vector) // 4} dims; the header says {dim}"
        )


def rekey(key: str, source: str, target: str) -> str:
    """Move a key from the backup's prefix to this store's prefix ('' stays '')."""
    return target + key[len(source) :] if key and key.startswith(source) else key


def decide(ours: float | None, theirs: float) -> tuple[str, str]:
    """add / update / skip for one item, by last change time. Pure."""
    if ours is None:
        return "add", "not in this store"
    if theirs > ours:
        return "update", f"the backup's copy is newer ({iso(theirs)} > {iso(ours)})"
    return "skip", "this store's copy is as new or newer"


def changed_at(record: Contradiction) -> float:
    return max(record.detected_at, record.resolved_at)


def rekeyed(memory: Memory, source: str, target: str) -> Memory:
    if source == target:
        return memory
    return replace(memory, superseded_by=rekey(memory.superseded_by or "", source, target) or None)


def rekeyed_suppression(record: dict[str, Any], source: str, target: str) -> dict[str, Any]:
    """Exempt memories and the source memory of a suppression move to this store's prefix too."""
    return {
        **record,
        "exempt": [rekey(k, source, target) for k in record.get("exempt") or []],
        "source_key": rekey(record.get("source_key") or "", source, target) or None,
    }


def rekeyed_record(record: Contradiction, source: str, target: str) -> Contradiction:
    if source == target:
        return record
    return replace(
        record,
        a=rekey(record.a, source, target),
        b=rekey(record.b, source, target),
        merged_key=rekey(record.merged_key, source, target),
        prior={rekey(k, source, target): v for k, v in record.prior.items()},
    )
