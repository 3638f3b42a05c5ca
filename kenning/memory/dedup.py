"""The import's duplicate decision, made the same way whatever the engine (issue 41).

A line is a duplicate when a candidate within its namespace and project reaches the threshold and
says what the line says about the same event (remember's rule, ``repeats``). What can make the
decision differ between engines is kept out of it:

- **which candidates**: every earlier line of the same import is compared here, in numpy (``Kept``,
  and the lines before it in its batch), never through the index; only memories the store held
  before the import come from the engine's KNN, asked for a pool of ``POOL`` rows rather than one;
- **their similarity**: a store candidate near the threshold is re-scored by exact cosine over its
  stored vector (``cosine``), so both engines' float32 kernels give way to the same arithmetic;
  a candidate known here (an earlier line) keeps the similarity computed here;
- **their order**: candidates are taken by similarity, ties (equal to 4 decimals: a stored vector
  is spread for its key by ~1e-6, an earlier line's is the model's own) by key (``duplicate_of``),
  the first one that repeats the line wins, instead of the first row an engine happened to return.

Pure: no I/O (the store's candidates and their vectors are read by ``kenning.memory.bulk``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from kenning.core.models import Memory
from kenning.memory.sameness import same_event, same_statement, window

# rows of the store's KNN a line's candidates come from (remember keeps the nearest of 8)
POOL = 16
# an engine's similarity this far below the threshold cannot reach it by exact arithmetic
# (float32 kernels differ by ~1e-6): such rows are not re-scored
MARGIN = 0.005
# similarities equal to this many decimals tie (the key decides): a stored vector is spread for its
# key (kenning.store.vectors, ~1e-6 from the model's) where an earlier line's is the model's own
TIE_DIGITS = 4
GROW = 256  # a ``Kept`` group's first array holds this many rows, doubling when full
Group = tuple[str, str]  # (namespace, project): the scope of the duplicate check
Candidate = tuple[Memory, float]  # a memory and its similarity to the line
Matrix = np.ndarray[Any, Any]


def repeats(earlier: Memory, memory: Memory) -> bool:
    """Whether ``memory`` says what ``earlier`` says about the same event: remember's rule."""
    return same_statement(earlier.content, memory.content) and same_event(
        earlier.event_date, memory.event_date, window(memory)
    )


def duplicate_of(
    memory: Memory, candidates: Sequence[Candidate], threshold: float
) -> Candidate | None:
    """The candidate ``memory`` repeats: the most similar one at or above ``threshold`` that
    ``repeats`` it (ties by key: the older memory first); None when none does. A candidate named
    twice keeps its last similarity (the caller lists the store's rows first, its own after)."""
    best: dict[str, Candidate] = {}
    for other, similarity in candidates:
        best[other.key] = (other, similarity)
    ranked = sorted(best.values(), key=lambda c: (-round(c[1], TIE_DIGITS), c[0].key))
    for other, similarity in ranked:
        if similarity < threshold:
            return None
        if repeats(other, memory):
            return other, similarity
    return None


def cosine(stored: Matrix, vector: Matrix) -> float:
    """Exact cosine of a stored vector and a line's (float32, as the engines' COSINE metric)."""
    a = np.asarray(stored, dtype=np.float32)
    b = np.asarray(vector, dtype=np.float32)
    norms = float(np.linalg.norm(a)) * float(np.linalg.norm(b))
    return float(a @ b) / norms if norms > 0 else 0.0


def within(matrix: Matrix, index: int, earlier: list[int], threshold: float) -> list[int]:
    """The rows of ``earlier`` (lines before ``index`` in its batch) at or above ``threshold``."""
    if not earlier:
        return []
    sims = matrix[earlier] @ matrix[index]
    return [earlier[j] for j in np.nonzero(sims >= threshold)[0]]


class Kept:
    """What the import's earlier batches stored (or, in a dry run, would have stored), per
    ``Group``: compared here, so no line's decision depends on the index finding them.

    The vectors of a group sit in one array that doubles when full, so a batch is compared with
    all of them in one matrix product (a row at a time would read the whole array once per
    line)."""

    def __init__(self) -> None:
        self.memories: dict[Group, list[Memory]] = {}
        self.rows: dict[Group, Matrix] = {}

    def add(self, memory: Memory, vector: Any) -> None:
        group = (memory.namespace, memory.project)
        items = self.memories.setdefault(group, [])
        rows = self.rows.get(group)
        if rows is None or len(items) == len(rows):
            grown = np.empty((max(GROW, 2 * len(items)), len(vector)), dtype=np.float32)
            if rows is not None:
                grown[: len(items)] = rows
            self.rows[group] = rows = grown
        rows[len(items)] = vector
        items.append(memory)

    def near(
        self, memories: Sequence[Memory], matrix: Matrix, threshold: float
    ) -> list[list[Candidate]]:
        """For each memory, the kept ones of its group at or above ``threshold``."""
        out: list[list[Candidate]] = [[] for _ in memories]
        groups: dict[Group, list[int]] = {}
        for i, memory in enumerate(memories):
            groups.setdefault((memory.namespace, memory.project), []).append(i)
        for group, indices in groups.items():
            items = self.memories.get(group)
            if not items:
                continue
            sims = self.rows[group][: len(items)] @ matrix[indices].T
            for row, column in zip(*np.nonzero(sims >= threshold), strict=True):
                out[indices[column]].append((items[row], float(sims[row, column])))
        return out
