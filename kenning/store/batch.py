"""KNNs queued on a caller's pipeline and answered from its replies (``Batch``): a remember's
duplicate and contradiction searches, sent with its claim in one round trip
(``Store.claim_and_search``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import valkey

from kenning.core import schema
from kenning.core.errors import StoreError
from kenning.store import prefilter
from kenning.store.client import call, text
from kenning.store.hits import Hit, Near, SearchResult
from kenning.store.unreachable import Unreachable, merged


class Batch:
    """KNNs queued on a caller's pipeline (``queue``) and answered from its replies (``finish``),
    each returning the fields its rows are decoded from: ``search.return_fields``, or when it
    names none every declared field (and ``Near.fields``). Only the rows a ``Near`` keeps are
    decoded; a result is paged as ``search_many`` pages it. No second round trip, except on
    valkey-search (``exact``): there a filtered KNN sends its filter's keys in the caller's
    pipeline and -- when the set is small and not empty -- their vectors in one more round trip,
    shared by every search of the batch (``prefilter``); a larger set runs
    the KNN itself in that trip."""

    def __init__(
        self,
        client: valkey.Valkey,
        wanted: Sequence[Near],
        *,
        exact: bool,
        unreachable: Unreachable,
    ) -> None:
        self.client = client
        self.unreachable = unreachable
        self.wanted = [
            w
            if w.search.return_fields
            else replace(w, search=replace(w.search, return_fields=_every(w)))
            for w in wanted
        ]
        self.exact = [exact and prefilter.candidates(w.search) for w in self.wanted]

    def queue(self, pipe: Any) -> None:
        """Queue every search (or its filter's keys) on ``pipe``; ``finish``
        takes their replies in order."""
        for w, exact in zip(self.wanted, self.exact, strict=True):
            if exact:
                prefilter.queue_keys(pipe, [w.search])
            else:
                pipe.execute_command(*w.search.args())

    def finish(self, replies: Sequence[Any]) -> list[SearchResult]:
        """The results, in the order given, from the replies of what ``queue`` queued."""
        answers = iter(replies)
        first = [
            [next(answers) for _ in range(prefilter.replies(w.search))] if exact else next(answers)
            for w, exact in zip(self.wanted, self.exact, strict=True)
        ]
        keys = [
            prefilter.small_sets([w.search], got)[0] if exact else None
            for w, exact, got in zip(self.wanted, self.exact, first, strict=True)
        ]
        later = iter(self._second(keys))  # read in the order ``_second`` queued
        small = [isinstance(found, list | prefilter.Worded) for found in keys]
        graph = [None if exact else w.search for w, exact in zip(self.wanted, small, strict=True)]
        extra = iter(self.unreachable.rows(graph, [_fields(w) for w in self.wanted]))
        out: list[SearchResult] = []
        for w, exact, got, found in zip(self.wanted, self.exact, first, keys, strict=True):
            rows: Sequence[tuple[str, float, dict[Any, Any]]]
            if not exact:
                rows = _reply_rows(got)
            elif isinstance(found, list | prefilter.Worded):
                rows = prefilter.nearest(
                    w.search, found, [next(later) for _ in prefilter.members(found)], _fields(w)
                )
            else:
                rows = _reply_rows(next(later))
            out.append(_kept_result(merged(rows, next(extra), w.search.knn), w))
        return out

    def _second(self, keys: Sequence[prefilter.Set | bool | None]) -> list[Any]:
        """The exact searches' second round trip: the vectors of each small set,
        the KNN of each larger one."""
        pipe = self.client.pipeline(transaction=False)
        queued = False
        for w, exact, found in zip(self.wanted, self.exact, keys, strict=True):
            if exact and isinstance(found, list | prefilter.Worded):
                prefilter.queue_vectors(pipe, found, _fields(w))
                queued = queued or bool(prefilter.members(found))
            elif exact:
                pipe.execute_command(*w.search.args())  # type: ignore[no-untyped-call]
                queued = True
        return call(pipe.execute, raise_on_error=True) if queued else []


def _every(near: Near) -> tuple[str, ...]:
    """What a ``Batch`` search that names no fields returns: every declared
    field and ``near.fields``."""
    return (*dict.fromkeys((*schema.FIELD_NAMES, *near.fields)), schema.DISTANCE_ALIAS)


def _fields(near: Near) -> tuple[str, ...]:
    return tuple(f for f in near.search.return_fields if f != schema.DISTANCE_ALIAS)


_DISTANCE = schema.DISTANCE_ALIAS.encode()


def _reply_rows(reply: Any) -> list[tuple[str, float, dict[bytes, bytes]]]:
    """(key, distance, the raw fields) of each row of one KNN reply; nothing decoded
    but the key and distance."""
    if not isinstance(reply, list) or not reply:
        raise StoreError(f"unexpected FT.SEARCH reply: {reply!r:.200}")
    rows = []
    for i in range(1, len(reply) - 1, 2):
        raw = reply[i + 1]
        fields = dict(zip(raw[::2], raw[1::2], strict=True))
        rows.append((text(reply[i]), float(fields.pop(_DISTANCE, b"inf")), fields))
    return rows


def _kept_result(rows: Sequence[tuple[str, float, dict[Any, Any]]], near: Near) -> SearchResult:
    """The rows ``near`` keeps (``_kept``), phantoms dropped, paged, decoded (raw
    fields or ``prefilter``'s)."""
    kept: list[tuple[str, float, dict[str, str]]] = []
    phantoms = 0
    for key, distance, raw in rows:
        if key in near.skip or (near.max_distance is not None and distance > near.max_distance):
            continue
        fields = {text(k): text(v) for k, v in raw.items()}
        if near.accept is not None and not near.accept(fields):
            continue
        if "created_at" not in fields:
            phantoms += 1  # the index still lists a hash that is gone
            continue
        kept.append((key, distance, fields))
    page = near.search.page(kept, lambda row: row[1])
    return SearchResult(
        total=len(rows),
        hits=tuple(Hit(schema.decode(key, fields), distance) for key, distance, fields in page),
        phantoms=phantoms,
    )
