"""What backup and restore answer: a restore's plan item by item, a written or received backup,
a listed file, and a restore's report (kenning.ops.backup)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kenning.core.models import Memory
from kenning.store import Contradiction


@dataclass
class Plan:
    """What a restore would do, item by item."""

    # (action, memory, reason)
    memories: list[tuple[str, Memory, str]] = field(default_factory=list)
    vectors: dict[str, bytes] = field(default_factory=dict)
    suppressions: list[tuple[str, str, dict[str, Any], str]] = field(default_factory=list)
    contradictions: list[tuple[str, Contradiction, str]] = field(default_factory=list)
    kept_apart: list[tuple[str, tuple[str, str], dict[str, Any], str]] = field(default_factory=list)

    def counts(self, rows: list[Any]) -> dict[str, int]:
        out = {"add": 0, "update": 0, "skip": 0}
        for row in rows:
            out[row[0]] += 1
        return out


@dataclass(frozen=True, slots=True)
class BackupWritten:
    """A backup file written (``Backups.backup``): its name, path, size and what it holds."""

    file: str
    path: str
    bytes: int
    vectors: bool
    memories: int
    suppressions: int
    contradictions: int
    project_contexts: int
    kept_apart: int  # pairs a person decided are not duplicates ("keep both")

    def public(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class BackupFile:
    """A file in the backup directory (``list_backups``); ``bytes`` is its size."""

    file: str
    bytes: int
    modified_at: str | None

    def public(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Uploaded:
    """An uploaded backup kept in the backup directory (``receive``)."""

    file: str
    bytes: int

    def public(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class RestoreReport:
    """What a restore would do (``dry_run``) or did: per kind {add, update, skip}, how vectors
    are treated, and the first ``REPORT_ITEMS`` items (changes first) with the reason of each."""

    dry_run: bool
    file: str
    backup_created_at: str | None
    memories: dict[str, int]
    suppressions: dict[str, int]
    contradictions: dict[str, int]
    kept_apart: dict[str, int]
    vectors: str
    items: list[dict[str, str]]
    items_total: int
    # after an applied restore: the search graph's self-check (kenning.store.GraphCheck.public())
    self_check: dict[str, Any] | None = None

    def public(self) -> dict[str, Any]:
        return asdict(self)
