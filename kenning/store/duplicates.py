"""Pairs a person decided are not duplicates ("keep both").

``{prefix}duplicates:distinct`` is one hash: ``"<key a>|<key b>"`` (the two keys sorted) -> a JSON
record of who decided, when and why. ``find_duplicates`` never links such a pair again. One key per
command (cluster-safe).
"""

from __future__ import annotations

import json
from typing import Any

import valkey

from kenning.store.client import call, text


def pair_id(a: str, b: str) -> str:
    first, second = sorted((a, b))
    return f"{first}|{second}"


class DistinctPairs:
    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.key = f"{prefix}duplicates:distinct"

    def record(self, pairs: list[tuple[str, str]], decision: dict[str, Any]) -> None:
        value = json.dumps(decision, sort_keys=True)
        call(self.client.hset, self.key, mapping={pair_id(a, b): value for a, b in pairs})

    def all(self) -> frozenset[str]:
        """Every decided pair id (a person's decisions: few, read once per duplicate search)."""
        return frozenset(text(k) for k in call(self.client.hkeys, self.key))
