"""Memories the search graph does not reach, and the exact look-up that still finds them.

The graph self-check (kenning.store.graph_check) searches every memory by its own vector and
re-inserts the ones the HNSW graph misses; a few can stay unreachable after its passes (2 of
100,000 after a valkey-search reindex, 25-46 of 5,000 random vectors at EF_RUNTIME 10:
bench/FINDINGS.md). No depth or re-insertion is sure to reach them, so the check keeps their keys
here (``record``: one hash, with the index it checked), and every KNN the graph answers on that
index also scores the ones its filter admits exactly (``Unreachable.rows``): the filter's
members among them, with their vectors, from one FT.SEARCH pinned to their ``created_at`` (a
NUMERIC field every memory has; the pin admits any memory within a millisecond of one, and the
keys are then matched), and the cosine distance the engines compute (``prefilter.nearest``).
``merged`` puts them among the graph's rows, nearest first, at most k: what an exact KNN returns.

The list is read at most once a second per process (``REFRESH``; a check in this process clears
its copy at once) and is empty on a healthy graph, where a KNN costs nothing more. It holds at most
``MAX_KEYS``; a check that leaves more says so (the rest need a ``kenning reindex``). A memory
forgotten since is simply not found by the pinned filter; one re-embedded since stays listed until
the next check, scored by its new vector (the same row the graph may return: kept once).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import valkey

from kenning.core import query, schema
from kenning.core.query import Search
from kenning.store import prefilter, vectors
from kenning.store.client import call, text
from kenning.store.prefilter import Row

REFRESH = 1.0  # seconds a process keeps the list it read
MAX_KEYS = 1_000  # the most the list holds (one FT.SEARCH clause per distinct created_at)
MATCHES = 10_000  # keys a pinned filter reads at most (memories sharing a created_at)
WINDOW = 1e-3  # seconds either side of a pinned created_at: any parse of the stored text
INDEX_FIELD = "@index"  # the list's field naming the index it was checked on (never a key)

# Replaces the list in one step (one key: whole on a cluster too). ARGV: field, value, ...
_REPLACE = """
redis.call('DEL', KEYS[1])
if #ARGV > 0 then redis.call('HSET', KEYS[1], unpack(ARGV)) end
return 1
"""

R = TypeVar("R", bound=tuple[object, ...])


def register_key(prefix: str) -> str:
    return f"{prefix}graph:unreachable"


@dataclass(frozen=True)
class Register:
    """The last check's list: the index it checked, each memory the graph missed there and its
    ``created_at``."""

    index: str = ""
    created: dict[str, float] = field(default_factory=dict)

    def covers(self, search: Search) -> bool:
        """Whether ``search`` is a KNN on the checked index while some memory is listed."""
        return (
            bool(self.created)
            and search.index == self.index
            and search.knn is not None
            and search.vector is not None
        )

    def pinned(self, search: Search, fields: Sequence[str] = ()) -> Search:
        """``search``'s filter (no KNN) narrowed to the listed memories' ``created_at``: the
        memories among them it admits (with any other created within ``WINDOW`` of one), each
        with its vector and ``fields``."""
        times = sorted(set(self.created.values()))
        pin = query.any_of(*(query.numeric("created_at", t - WINDOW, t + WINDOW) for t in times))
        return Search(
            index=search.index,
            namespaces=search.namespaces,
            clauses=(*search.clauses, pin),
            return_fields=(schema.VECTOR_FIELD, *fields),
            limit=MATCHES,
        )


def record(client: valkey.Valkey, prefix: str, index: str, keys: Sequence[str]) -> int:
    """Make ``keys`` (the memories a check on ``index`` left unreachable) the list, at most
    ``MAX_KEYS`` of them (one gone meanwhile is left out); none empties it. The number listed."""
    kept = list(dict.fromkeys(keys))[:MAX_KEYS]
    created = vectors.times_many(client, kept, "created_at") if kept else []
    pairs = [(k, t) for k, t in zip(kept, created, strict=True) if t is not None]
    argv: list[str] = [INDEX_FIELD, index] if pairs else []
    for key, at in pairs:
        argv += [key, repr(at)]
    call(client.eval, _REPLACE, 1, register_key(prefix), *argv)
    return len(pairs)


def read(client: valkey.Valkey, prefix: str) -> Register:
    raw = call(client.hgetall, register_key(prefix))
    fields = {text(k): text(v) for k, v in raw.items()}
    index = fields.pop(INDEX_FIELD, "")
    return Register(index, {k: float(v) for k, v in fields.items()})


class Unreachable:
    """The list as this process last read it, and the rows it adds to KNNs."""

    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.prefix = prefix
        self._register = Register()
        self._read_at = -REFRESH

    def current(self) -> Register:
        """The list, re-read at most every ``REFRESH`` seconds."""
        now = time.monotonic()
        if now - self._read_at >= REFRESH:
            self._register = read(self.client, self.prefix)
            self._read_at = now
        return self._register

    def forget(self) -> None:
        """Read the list again on next use (a check in this process has just written it)."""
        self._read_at = -REFRESH

    def rows(
        self, searches: Sequence[Search | None], fields: Sequence[Sequence[str]]
    ) -> list[list[Row]]:
        """Per search (None: answered otherwise), the listed memories its filter admits, nearest
        first, at most its k, each row with ``fields`` of the memory; [] for the others. No round
        trip for searches that are not KNNs nor while the list is empty (read at most once a
        second); else one."""
        out: list[list[Row]] = [[] for _ in searches]
        if not any(s is not None and s.knn is not None for s in searches):
            return out  # a listing or a count: the list is not even read
        register = self.current()
        chosen = [i for i, s in enumerate(searches) if s is not None and register.covers(s)]
        if not chosen:
            return out
        pipe = self.client.pipeline(transaction=False)
        for i in chosen:
            pinned = register.pinned(_search(searches[i]), fields[i])
            pipe.execute_command(*pinned.args())  # type: ignore[no-untyped-call]
        for i, reply in zip(chosen, call(pipe.execute, raise_on_error=True), strict=True):
            keys, rows = _listed_rows(reply, register, fields[i])
            out[i] = prefilter.nearest(_search(searches[i]), keys, rows, fields[i]) if keys else []
        return out


def _listed_rows(
    reply: Any, register: Register, fields: Sequence[str]
) -> tuple[list[str], list[list[bytes | None]]]:
    """The listed keys of a pinned search's reply and, per key, its vector then ``fields`` (the
    order ``prefilter.nearest`` reads)."""
    keys: list[str] = []
    rows: list[list[bytes | None]] = []
    for at in range(1, len(reply) - 1, 2):
        key = text(reply[at])
        if key not in register.created:
            continue  # created within the pin's window, not listed
        raw = reply[at + 1]
        values = {text(raw[j]): raw[j + 1] for j in range(0, len(raw) - 1, 2)}
        keys.append(key)
        rows.append([values.get(name) for name in (schema.VECTOR_FIELD, *fields)])
    return keys, rows


def _search(search: Search | None) -> Search:
    assert search is not None
    return search


def merged(rows: Sequence[R], extra: Sequence[R], k: int | None) -> list[R]:
    """A KNN's rows (key first, distance second) with the ``extra`` ones it lacks, nearest first
    (ties by key), at most ``k``: what an exact KNN returns when the graph missed those. Without
    ``extra`` the rows as they came."""
    if not extra:
        return list(rows)
    seen = {row[0] for row in rows}
    both = [*rows, *(row for row in extra if row[0] not in seen)]
    both.sort(key=lambda row: (_distance(row[1]), str(row[0])))
    return both[:k] if k else both


def _distance(value: object) -> float:
    return float(value) if isinstance(value, int | float) else float("inf")
