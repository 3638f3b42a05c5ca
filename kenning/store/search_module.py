"""Which search module the server runs: valkey-search (production) or
RediSearch (the embedded default).

The engine's queries are the same on both (kenning/core/query.py); this is for the record (the
benchmark
says which engine it measured, `kenning doctor` shows it) and for tests that compare the two.
"""

from __future__ import annotations

from dataclasses import dataclass

import valkey

from kenning.store.client import call, text

VALKEY_SEARCH = "valkey-search"
REDISEARCH = "redisearch"


@dataclass(frozen=True)
class SearchModule:
    """The loaded search module: ``name`` is VALKEY_SEARCH or REDISEARCH;
    ``version`` as dotted text."""

    name: str
    version: str

    def __str__(self) -> str:
        return f"{self.name} {self.version}"


def detect(client: valkey.Valkey) -> SearchModule | None:
    """The search module, or None when none is loaded.

    Both modules register as ``search`` in MODULE LIST. RediSearch reports ``search_version`` in
    ``INFO search``; valkey-search does not, and encodes its version as
    major<<16 | minor<<8 | patch.
    """
    version = _module_version(client)
    if version is None:
        return None
    info = call(client.info, "search")
    if "search_version" in info:
        return SearchModule(REDISEARCH, text(info["search_version"]))
    return SearchModule(VALKEY_SEARCH, f"{version >> 16}.{(version >> 8) & 0xFF}.{version & 0xFF}")


def _module_version(client: valkey.Valkey) -> int | None:
    for entry in call(client.execute_command, "MODULE", "LIST"):
        pairs = {text(entry[i]): entry[i + 1] for i in range(0, len(entry) - 1, 2)}
        if text(pairs.get("name", "")) == "search":
            return int(text(pairs.get("ver", "0")))
    return None
