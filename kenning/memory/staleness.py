"""While a value change or an explicit reversal is open, the newer statement leads recall
(docs/recall.md, "Value changes").

A ``value`` contradiction (``kenning.language.values``) pairs an older statement (side ``a``) with
a newer one giving the same subject another value (side ``b``); a ``reversal`` pairs it with a
newer one that takes it back in so many words ("no longer", "dropped", "moved from"). Either
way the newer statement leads, whatever the two memories' ages. Until someone resolves it, recall
keeps both (nothing is decided yet) but never ranks the older above the newer: the older one is
flagged ``possibly_stale`` (naming the newer key, the slot and both values) and placed just below
the newer one; when only the older one matched, the newer one is brought in beside it, just above.
Only disputed hits are looked at, so a recall without open disputes costs nothing extra.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from kenning.core.models import RecallHit, Stale
from kenning.store import Contradiction, ContradictionStore

# the detectors whose newer side leads: a new value, or an explicit reversal ("no longer X")
LEADING = frozenset({"value", "reversal"})
# Just below / above: the order changes, the other scores stay what they were.
BELOW = 0.999
ABOVE = 1.001


@dataclass(frozen=True)
class Change:
    """An open value change: the older key, the newer key and the evidence."""

    record: str
    older: str
    newer: str
    evidence: dict[str, Any]

    def flag(self) -> Stale:
        return Stale(
            newer=self.newer,
            contradiction=self.record,
            slot=self.evidence.get("slot") or self.evidence.get("kind"),
            old_value=self.evidence.get("old_value", self.evidence.get("clause_a")),
            new_value=self.evidence.get("new_value", self.evidence.get("clause_b")),
        )


def open_changes(records: ContradictionStore, hits: list[RecallHit]) -> list[Change]:
    """The open value changes whose older side is among ``hits`` (two round
    trips, only for disputed hits)."""
    disputed = [h.memory.key for h in hits if h.memory.trust == "disputed"]
    found = records.many(records.for_keys(disputed))
    keys = set(disputed)
    return [
        _change(r) for r in found if r.status == "open" and r.detector in LEADING and r.a in keys
    ]


def _change(record: Contradiction) -> Change:
    return Change(record=record.id, older=record.a, newer=record.b, evidence=dict(record.evidence))


def newer_first(
    hits: list[RecallHit], changes: list[Change], fetch: Callable[[str], RecallHit | None]
) -> list[RecallHit]:
    """``hits`` with every older side of ``changes`` flagged and ranked just below its newer side.

    ``fetch(key)`` scores a newer side that did not match on its own (None
    when it may not be shown).
    """
    by_key = {h.memory.key: h for h in hits}
    for change in changes:
        newer = by_key.get(change.newer) or fetch(change.newer)
        older = by_key[change.older]
        if newer is None:
            by_key[change.older] = replace(older, stale=change.flag())
            continue
        if newer.score <= older.score and change.newer in by_key:
            older = replace(older, score=newer.score * BELOW)
        elif newer.score <= older.score:  # brought in: it takes the place just above
            newer = replace(newer, score=older.score * ABOVE)
        by_key[change.newer] = newer
        by_key[change.older] = replace(older, stale=change.flag())
    return sorted(by_key.values(), key=lambda h: h.score, reverse=True)
