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
from kenning.store.unit import Op, Unit, Units


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

    def recording(
        self, pairs: list[tuple[str, str]], decision: dict[str, Any], read: dict[str, str]
    ) -> list[Op]:
        """``record``'s write as ops for a decision's unit, gated on each pair's decision still
        being as ``read`` (``decided``; '' = none): two people keeping the same pairs apart at
        once record it once."""
        value = json.dumps(decision, sort_keys=True)
        ids = [pair_id(a, b) for a, b in pairs]
        gate = tuple(v for pid in ids for v in (pid, read.get(pid, "")))
        flat = tuple(v for pid in ids for v in (pid, value))
        return [("GUARD", self.key, gate), ("HSET", self.key, flat)]

    def undecided(self, pairs: list[tuple[str, str]]) -> Op:
        """A gate for a decision's unit: none of ``pairs`` was kept apart (a merge of them)."""
        return ("GUARD", self.key, tuple(v for a, b in pairs for v in (pair_id(a, b), "")))

    def decided(self, pairs: list[tuple[str, str]]) -> dict[str, str]:
        """The stored decision of each pair (its raw record; absent when none)."""
        ids = [pair_id(a, b) for a, b in pairs]
        raw = call(self.client.hmget, self.key, ids) if ids else []
        return {pid: text(v) for pid, v in zip(ids, raw, strict=True) if v is not None}

    def decisions(self) -> dict[str, dict[str, Any]]:
        """Every decided pair id -> its decision (who, when, why): what a backup carries."""
        return {
            text(k): json.loads(text(v)) for k, v in call(self.client.hgetall, self.key).items()
        }

    def all(self) -> frozenset[str]:
        """Every decided pair id (a person's decisions: few, read once per duplicate search)."""
        return frozenset(text(k) for k in call(self.client.hkeys, self.key))
