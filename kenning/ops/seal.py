"""A backup's checksum: what makes an edited backup file refused (docs/backup.md). Pure.

The checksum is a SHA-256 over the file's content in a canonical form -- the header fields, each
memory entry, then each other section, every one as sorted-key compact JSON -- so it can be
computed while the file is streamed out one memory at a time, and verified from the parsed file
whatever its whitespace. A file whose content differs from what was written in any value (a
memory's text, a vector, a time, a record) no longer matches and is refused before anything is
planned.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

ALGORITHM = "sha256"
HEADER = ("format", "version", "created_at", "prefix", "embedding", "vectors")
SECTIONS = ("suppressions", "contradictions", "kept_apart", "project_contexts")


def _canon(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":")).encode("utf-8") + b"\n"


class Seal:
    """The running checksum of a backup being written (or re-read): header, memories, sections."""

    def __init__(self, header: Mapping[str, Any]) -> None:
        self._hash = hashlib.sha256()
        self._hash.update(_canon({name: header.get(name) for name in HEADER}))

    def memory(self, entry: Mapping[str, Any]) -> None:
        self._hash.update(_canon(entry))

    def finish(self, sections: Mapping[str, Any]) -> str:
        for name in SECTIONS:
            self._hash.update(_canon(sections.get(name)))
        return f"{ALGORITHM}:{self._hash.hexdigest()}"


def checksum(data: Mapping[str, Any]) -> str:
    """The checksum of a parsed backup (what ``Seal`` gave when it was written)."""
    seal = Seal(data)
    for entry in data.get("memories") or []:
        seal.memory(entry)
    return seal.finish(data)


def sealed(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with its checksum (a backup written whole, e.g. by a test or a migration)."""
    return {**data, "checksum": checksum(data)}
