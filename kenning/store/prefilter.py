"""Exact KNN over a small filtered set, for the engine whose planner walks the whole
graph (docs/valkey-search.md).

valkey-search 1.2.1 pre-filters a hybrid KNN only when the filter's estimated matches are at most
0.1% of the index (``search.prefiltering-threshold-ratio``, changeable only in debug mode);
otherwise it walks the HNSW graph with the filter inline. A recall's filters are selective (one
project: ~30 of 5,800 memories of a namespace at 10k), so the walk visits nearly every node looking
for k matches: 5-20 ms per KNN against 0.1-0.3 ms on RediSearch, whose planner brute-forces small
sets (``python -m bench.shapes``).

``exact`` does what a pre-filtering planner does, from the client, in the caller's round trips: the
filter's keys first (``FT.SEARCH`` NOCONTENT, ~0.2 ms), then -- for a set of at most ``MAX_SET``
memories -- their vectors, and the k nearest by exact cosine distance (what the engines' COSINE
metric computes). A broader filter is left to the engine's KNN (inline filtering is cheap when most
nodes match). Exact search over the set finds what the engine's KNN would, or
better (no approximation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import valkey

from kenning.core import schema
from kenning.core.query import Search, text_terms
from kenning.language import phrases
from kenning.store.client import call, text

# above this many filtered memories the engine's inline-filtered KNN is the cheaper path
MAX_SET = 400
# a TEXT clause's matches read (keys only) to intersect with the other clauses' (``split``)
MAX_TEXT = 5_000
TEXT_CLAUSE = "@content:"  # how query.text_any starts a clause on the one TEXT field (schema)

Row = tuple[str, float, dict[str, str]]  # key, distance, the fields asked for
CONTENT = "content"  # the TEXT field a ``Worded`` set's terms are checked on


@dataclass(frozen=True)
class Worded:
    """A small filter set whose TEXT clauses matched more than ``MAX_TEXT`` memories: its terms
    are checked here, on each member's content, instead of asking the engine for the whole filter
    (on valkey-search a TEXT term ANDed with a selective filter took 17-110 ms at 250k memories).
    A member counts when, for every clause, one of its terms is a word of the content
    (``phrases.search_words``). The engines also match a term's stems, so this keeps a subset of
    their matches; every caller confirms a row with a stricter check of its own (an identifier
    search keeps only rows holding the identifier verbatim, whose words are all literally there),
    so what it keeps is what the engine's filter would give, or more rows holding the identifier
    when more than k matched the term (bench/FINDINGS.md, issue 21's third pass)."""

    keys: list[str]
    clauses: tuple[tuple[str, ...], ...]  # per TEXT clause, its terms (any one matches)

    def holds(self, content: str) -> bool:
        words = set(phrases.search_words(content))  # the terms were made by it: never stop words
        return all(any(term in words for term in terms) for terms in self.clauses)


def candidates(search: Search) -> bool:
    """Whether ``search`` is a filtered KNN ``exact`` may answer."""
    return search.knn is not None and bool(search.clauses) and search.vector is not None


def split(search: Search) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(its TEXT clauses, its other clauses). valkey-search answers a TEXT term ANDed with a
    selective filter in 17-54 ms at 250k memories where the term alone takes 0.4 ms and the
    filter alone 0.3 ms, so ``exact`` asks for the two apart and intersects their
    keys (docs/valkey-search.md)."""
    text = tuple(c for c in search.clauses if c.lstrip("(").startswith(TEXT_CLAUSE))
    return text, tuple(c for c in search.clauses if c not in text)


def _asked(search: Search, together: bool) -> list[tuple[tuple[str, ...], int]]:
    """The NOCONTENT filters ``queue_keys`` sends for ``search``: (clauses, limit) each."""
    text, rest = split(search)
    if text and rest and not together:
        return [(rest, MAX_SET), (text, MAX_TEXT)]
    return [(search.clauses, MAX_SET)]


def replies(search: Search) -> int:
    """How many replies ``queue_keys`` queues for ``search`` (not ``together``)."""
    return len(_asked(search, False))


def queue_keys(pipe: Any, searches: Sequence[Search], *, together: bool = False) -> None:
    """Queue, per search, its filter: up to MAX_SET keys and the number that match; a filter with
    TEXT clauses as two (the others, the TEXT ones: see ``split``) unless ``together``."""
    for search in searches:
        for clauses, limit in _asked(search, together):
            pipe.execute_command(
                *Search(
                    index=search.index, namespaces=search.namespaces, clauses=clauses, limit=limit
                ).args()
            )


Set = list[str] | Worded  # the keys a filtered KNN is answered over


def small_sets(
    searches: Sequence[Search], replies: Sequence[Any], *, together: bool = False
) -> list[Set | bool | None]:
    """Per search, from its ``queue_keys`` replies: the filtered keys when they are at most
    MAX_SET, else None. A split filter's two sides are intersected; when only its TEXT side is
    over MAX_TEXT, the other side's keys come ``Worded`` (the terms checked on their content);
    False when that side is over MAX_SET too: ask it ``together``."""
    out: list[Set | bool | None] = []
    answers = iter(replies)
    for search in searches:
        asked = _asked(search, together)
        got = [next(answers) for _ in asked]
        if len(got) == 1:
            out.append([text(k) for k in got[0][1:]] if int(got[0][0]) <= MAX_SET else None)
        elif all(int(reply[0]) <= limit for reply, (_, limit) in zip(got, asked, strict=True)):
            matching = {text(k) for k in got[1][1:]}
            out.append([key for key in (text(k) for k in got[0][1:]) if key in matching])
        elif int(got[0][0]) <= MAX_SET:
            terms = tuple(text_terms(clause) for clause in split(search)[0])
            out.append(Worded([text(k) for k in got[0][1:]], terms))
        else:
            out.append(False)
    return out


def _filtered(client: valkey.Valkey, searches: Sequence[Search]) -> list[Set | None]:
    """``small_sets`` of ``searches``: one round trip, a second only for split filters
    that must be asked whole."""
    pipe = client.pipeline(transaction=False)
    queue_keys(pipe, searches)
    sets = small_sets(searches, call(pipe.execute, raise_on_error=True))
    again = [s for s, keys in zip(searches, sets, strict=True) if keys is False]
    if again:
        pipe = client.pipeline(transaction=False)
        queue_keys(pipe, again, together=True)
        whole = iter(small_sets(again, call(pipe.execute, raise_on_error=True), together=True))
        sets = [next(whole) if keys is False else keys for keys in sets]
    return [keys if isinstance(keys, list | Worded) else None for keys in sets]


def members(found: Set) -> list[str]:
    """The keys of a small set."""
    return found.keys if isinstance(found, Worded) else found


def _read(found: Set, fields: Sequence[str]) -> list[str]:
    """What ``queue_vectors`` reads after the vector: ``fields``, and the content a
    ``Worded`` set is checked on."""
    return (
        [*fields, CONTENT] if isinstance(found, Worded) and CONTENT not in fields else list(fields)
    )


def queue_vectors(pipe: Any, found: Set, fields: Sequence[str]) -> None:
    """Queue one HMGET per key of ``found``: the vector, then ``fields``
    (and ``_read``'s content)."""
    read = [schema.VECTOR_FIELD, *_read(found, fields)]
    for key in members(found):
        pipe.hmget(key, read)


def nearest(
    search: Search, found: Set, rows: Sequence[Sequence[bytes | None]], fields: Sequence[str]
) -> list[Row]:
    """The ``search.knn`` rows nearest to its vector (distance ascending, ties by key) among
    ``found``, whose ``queue_vectors`` replies are ``rows``; a key whose hash (or vector) is gone
    is skipped, and so is a member of a ``Worded`` set whose content lacks its terms."""
    assert search.vector is not None
    assert search.knn is not None
    present = [
        (key, row) for key, row in zip(members(found), rows, strict=True) if row[0] is not None
    ]
    if isinstance(found, Worded):
        at = 1 + _read(found, fields).index(CONTENT)
        present = [
            (key, row)
            for key, row in present
            if found.holds(text(row[at]) if row[at] is not None else "")
        ]
    if not present:
        return []
    matrix = np.vstack([np.frombuffer(row[0], dtype=np.float32) for _, row in present])  # type: ignore[arg-type]
    query = np.frombuffer(search.vector, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
    distances = 1.0 - (matrix @ query) / np.where(norms > 0, norms, 1.0)
    order = sorted(range(len(present)), key=lambda i: (float(distances[i]), present[i][0]))[
        : search.knn
    ]
    return [
        (
            present[i][0],
            float(distances[i]),
            {
                name: text(v)
                for name, v in zip(fields, present[i][1][1 : 1 + len(fields)], strict=True)
                if v is not None
            },
        )
        for i in order
    ]


def exact(
    client: valkey.Valkey, searches: Sequence[Search], fields: Sequence[Sequence[str]]
) -> list[list[Row] | None]:
    """Per search: its nearest rows computed here when it is a filtered KNN over a small set,
    else None (run it as a KNN). Two round trips, whatever the number of searches."""
    chosen = [i for i, s in enumerate(searches) if candidates(s)]
    out: list[list[Row] | None] = [None] * len(searches)
    if not chosen:
        return out
    sets = _filtered(client, [searches[i] for i in chosen])
    pipe = client.pipeline(transaction=False)
    for i, keys in zip(chosen, sets, strict=True):
        if keys is not None:
            queue_vectors(pipe, keys, fields[i])
    replies = iter(call(pipe.execute, raise_on_error=True))
    for i, keys in zip(chosen, sets, strict=True):
        if keys is not None:
            out[i] = nearest(searches[i], keys, [next(replies) for _ in members(keys)], fields[i])
    return out
