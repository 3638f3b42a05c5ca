"""Pairs a person decided are not duplicates ("keep both").

``{prefix}duplicates:distinct`` is one hash: ``"<key a>|<key b>"`` (the two keys sorted) -> a JSON
record of who decided, when and why. ``find_duplicates`` never links such a pair again. One key per
unit of work with its audit event.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import valkey

from kenning.store.audit import AuditEvent
from kenning.store.client import call, text
from kenning.store.unit import Unit, Units


def pair_id(a: str, b: str) -> str:
    first, second = sorted((a, b))
    return f"{first}|{second}"


class DistinctPairs:
    def __init__(self, client: valkey.Valkey, prefix: str, units: Units) -> None:
        self.client = client
        self.key = f"{prefix}duplicates:distinct"
        self.units = units

    def record(
        self, pairs: list[tuple[str, str]], decision: dict[str, Any], events: Sequence[AuditEvent]
    ) -> None:
        """The decided pairs with the decision's audit events, one unit of work."""
        value = json.dumps(decision, sort_keys=True)
        self.units.commit(Unit(events).hset(self.key, {pair_id(a, b): value for a, b in pairs}))

    def decisions(self) -> dict[str, dict[str, Any]]:
        """Every decided pair id -> its decision (who, when, why): what a backup carries."""
        return {
            text(k): json.loads(text(v)) for k, v in call(self.client.hgetall, self.key).items()
        }

    def all(self) -> frozenset[str]:
        """Every decided pair id (a person's decisions: few, read once per duplicate search)."""
        return frozenset(text(k) for k in call(self.client.hkeys, self.key))
