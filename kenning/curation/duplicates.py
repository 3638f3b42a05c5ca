"""Duplicates: clusters of near-identical memories, and merging them (docs/truth-maintenance.md).

``find_duplicates`` walks EVERY non-archived memory of a namespace (optionally one project) through
FT.SEARCH, reads the stored vectors (nothing is re-embedded) and compares them exactly, within each
project, in blocks. There is no cap: the report says how many memories it examined.
``merge_duplicates`` archives the others with the reason "duplicate of <keep>" and unions their tags
onto the one kept; each step is audited. ``keep_both`` records that a person looked at a cluster and
decided its memories are distinct (with a reason, audited): those pairs are never proposed again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Protocol

import numpy as np

from kenning.core import query, validation
from kenning.core.errors import Conflict, InvalidInput
from kenning.core.models import Memory
from kenning.language import polarity
from kenning.memory.memories import Memories
from kenning.runtime.context import Context
from kenning.runtime.sweep import Sweep
from kenning.store import pair_id
from kenning.truth.ruling import Ruling

BLOCK = 512
MAX_MERGE = 50
MAX_CLUSTERS = 200


class Archiver(Protocol):
    """The lifecycle's archive verb (so merging follows the same rules and hooks as any archive)."""

    def __call__(self, key: str, *, reason: str | None, actor: str) -> object: ...


def clusters(
    matrix: np.ndarray[Any, Any],
    threshold: float,
    linkable: Callable[[int, int], bool] | None = None,
) -> list[tuple[list[int], float, float]]:
    """Groups of row indexes whose vectors are linked by cosine >= threshold (single link). Pure.

    Rows are unit vectors. ``linkable(i, j)`` may veto a link (two opposite statements are close in
    meaning but are not duplicates). Returns (members, highest, lowest linking similarity) per group
    of two or more, biggest groups first.
    """
    n = matrix.shape[0]
    parent = list(range(n))
    best: dict[int, float] = {}
    worst: dict[int, float] = {}

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    links = [
        link for link in _links(matrix, threshold) if linkable is None or linkable(link[0], link[1])
    ]
    for i, j, _ in links:
        parent[root(i)] = root(j)
    for i, _, sim in links:
        top = root(i)
        best[top] = max(best.get(top, sim), sim)
        worst[top] = min(worst.get(top, sim), sim)
    groups: dict[int, list[int]] = {}
    for i in range(n):
        groups.setdefault(root(i), []).append(i)
    out = [(members, best[top], worst[top]) for top, members in groups.items() if len(members) > 1]
    out.sort(key=lambda g: (-len(g[0]), -g[1]))
    return out


def _links(matrix: np.ndarray[Any, Any], threshold: float) -> list[tuple[int, int, float]]:
    """Every pair (i < j) at or above the threshold, computed block by
    block to bound memory. Pure."""
    links: list[tuple[int, int, float]] = []
    for start in range(0, matrix.shape[0], BLOCK):
        sims = matrix[start : start + BLOCK] @ matrix.T
        rows, cols = np.nonzero(sims >= threshold)
        links += [
            (start + int(r), int(c), float(sims[r, c]))
            for r, c in zip(rows, cols, strict=True)
            if start + int(r) < int(c)
        ]
    return links


def suggested_keep(members: list[Memory]) -> Memory:
    """Active before deprioritised, verified before stated, most recalled, then the oldest."""
    return min(
        members,
        key=lambda m: (
            m.state != "active",
            m.trust != "verified",
            -m.recall_count,
            m.created_at,
            m.key,
        ),
    )


def _member(memory: Memory) -> dict[str, Any]:
    return {
        "key": memory.key,
        "content": memory.content[:300],
        "project": memory.project,
        "state": memory.state,
        "trust": memory.trust,
        "tags": list(memory.tags),
        "recall_count": memory.recall_count,
    }


@dataclass(frozen=True, slots=True)
class Cluster:
    """Near-duplicates in one project: the suggested keeper, the similarity range,
    and the members (summaries)."""

    keep: str
    highest_similarity: float
    lowest_similarity: float
    contains_opposites: bool  # single link chained two opposite statements: never merged blindly
    members: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class Clusters:
    """``Duplicates.find``: the clusters of one namespace (the largest
    ``MAX_CLUSTERS``) and what was read."""

    namespace: str
    project: str | None
    threshold: float
    examined: int
    without_vector: int
    phantoms: int
    cluster_count: int
    clusters: tuple[Cluster, ...]

    def public(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Merged:
    """``Duplicates.merge``: the memory kept, the ones it archived (and those
    that were already), its tags."""

    kept: str
    archived: list[str]
    already_archived: list[str]
    tags_added: list[str]
    tags_dropped: list[str]  # past MAX_TAGS
    reason: str

    def public(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class KeptApart:
    """``Duplicates.keep_both``: the memories a person said are not
    duplicates, and the pairs recorded."""

    kept: list[str]
    pairs: int
    reason: str

    def public(self) -> dict[str, Any]:
        return asdict(self)


class Duplicates:
    def __init__(self, ctx: Context, memories: Memories, archive: Archiver) -> None:
        self.ctx = ctx
        self.memories = memories
        self.archive = archive
        self.distinct = ctx.store.distinct

    def find(
        self, namespace: str, *, project: str | None = None, threshold: float | None = None
    ) -> Clusters:
        """Clusters of near-duplicates in one namespace (and project), from the stored vectors."""
        validation.namespace(namespace)
        limit = self.ctx.settings.duplicate_threshold if threshold is None else threshold
        if not 0.5 <= limit <= 1.0:
            raise InvalidInput(
                f"threshold must be between 0.5 and 1.0; got {limit}",
                hint=f"omit it for the default {self.ctx.settings.duplicate_threshold}",
            )
        clauses = [query.not_tag("state", ["archived"])]
        if project:
            clauses.append(query.tag("project", [validation.project(project)]))
        sweep = Sweep(self.ctx)
        by_project: dict[str, list[Memory]] = {}
        for memory in sweep.memories((namespace,), tuple(clauses)):
            by_project.setdefault(memory.project, []).append(memory)
        found: list[Cluster] = []
        missing = 0
        decided = self.distinct.all()
        for members in by_project.values():
            groups, lost = self._clusters(members, limit, decided)
            found += groups
            missing += lost
        found.sort(key=lambda c: (-len(c.members), -c.highest_similarity))
        return Clusters(
            namespace,
            project,
            limit,
            sweep.examined,
            missing,
            sweep.phantoms,
            len(found),
            tuple(found[:MAX_CLUSTERS]),
        )

    def _clusters(
        self, members: list[Memory], threshold: float, decided: frozenset[str]
    ) -> tuple[list[Cluster], int]:
        vectors = self.ctx.store.vectors([m.key for m in members])
        have = [(m, v) for m, v in zip(members, vectors, strict=True) if v is not None]
        if len(have) < 2:
            return [], len(members) - len(have)
        matrix = np.vstack([v for _, v in have])

        # "do X" and "do not X" embed alike: a contradiction, not a copy
        def linkable(i: int, j: int) -> bool:
            if pair_id(have[i][0].key, have[j][0].key) in decided:  # a person said: keep both
                return False
            return polarity.conflict(have[i][0].content, have[j][0].content) is None

        out: list[Cluster] = []
        for rows, high, low in clusters(matrix, threshold, linkable):
            # counts decide the keeper
            group = self.ctx.store.memories.recalls.live([have[i][0] for i in rows])
            # Single link can chain two opposite statements through a third: never
            # merge such a group blindly.
            opposed = any(not linkable(i, j) for n, i in enumerate(rows) for j in rows[n + 1 :])
            out.append(
                Cluster(
                    suggested_keep(group).key,
                    round(high, 4),
                    round(low, 4),
                    opposed,
                    tuple(_member(m) for m in group),
                )
            )
        return out, len(members) - len(have)

    def merge(self, keep: str, others: list[str], reason: str | None, *, actor: str) -> Merged:
        """Archive ``others`` as duplicates of ``keep`` and give ``keep`` the union of their tags:
        one unit of work gated on every memory as read (state, trust, ``keep``'s tags) and on no
        pair of them having been kept apart, so of two merges of one cluster that exclude each
        other exactly one applies (``Conflict`` for the other, nothing written)."""
        kept, names = self._merge_sides(keep, others)
        victims = [self.memories.get(key) for key in names]  # all exist before anything changes
        note = validation.reason(reason)
        why = f"duplicate of {keep}" + (f": {note}" if note else "")
        tags = tuple(dict.fromkeys((*kept.tags, *(t for m in victims for t in m.tags))))
        new_tags = [t for t in tags if t not in kept.tags]
        room = max(0, validation.MAX_TAGS - len(kept.tags))
        # a memory carries at most MAX_TAGS tags: say so
        added, dropped = new_tags[:room], new_tags[room:]
        archived = [v.key for v in victims if v.state != "archived"]
        # named apart: this merge did not archive them
        already = [v.key for v in victims if v.state == "archived"]
        done = Merged(keep, archived, already, added, dropped, why)
        ruling = Ruling(self.ctx, actor)
        ruling.take(kept, "tags")
        for victim in victims:
            ruling.take(victim)
        for key in archived:
            ruling.archive(key, why)
        if added:
            self._retag(ruling, kept, added, why)
        details = {k: v for k, v in done.public().items() if k not in ("kept", "reason")}
        ruling.record(
            self.ctx.event(
                actor,
                "merge_duplicates",
                keep,
                reason=why,
                before=kept.content,
                after=kept.content,
                details=details,
            )
        )
        if not ruling.commit([self.distinct.undecided([(keep, v) for v in names])]).applied:
            raise Conflict(_lost("merged", ruling), hint=_AGAIN)
        for victim in victims:  # like any archive: an archived side closes its contradictions
            if victim.key in archived and victim.trust == "disputed":
                self.memories.contradictions.close_for(victim.key, "archived", actor=actor)
        return done

    def _merge_sides(self, keep: str, others: list[str]) -> tuple[Memory, list[str]]:
        """The memory kept (never an archived one) and the other keys, checked."""
        kept = self.memories.get(keep)
        if kept.state == "archived":
            raise InvalidInput(
                f"{keep} is archived; keep an active memory", hint="reinstate it first"
            )
        names = list(dict.fromkeys(others))
        if not names or len(names) > MAX_MERGE or keep in names:
            raise InvalidInput(
                f"give 1-{MAX_MERGE} other keys, not including the one kept",
                hint="copy them from a find_duplicates cluster",
            )
        return kept, names

    def _retag(self, ruling: Ruling, kept: Memory, added: list[str], why: str) -> None:
        tags = (*kept.tags, *added)
        event = self.ctx.event(
            ruling.actor,
            "retag",
            kept.key,
            reason=why,
            before=kept.content,
            after=kept.content,
            details={"before": list(kept.tags), "after": list(tags)},
        )
        ruling.change(kept.key, {"tags": tags}, event)

    def keep_both(self, keys: list[str], reason: str | None, *, actor: str) -> KeptApart:
        """A person's decision that these memories are not duplicates: every pair among them is
        never proposed as a duplicate again. Nothing is archived or changed; the decision is
        audited, in one unit gated on every member's state as read and on each pair's decision
        as read (a merge or another keep of them meanwhile: ``Conflict``, nothing written)."""
        names = list(dict.fromkeys(keys))
        if not 2 <= len(names) <= MAX_MERGE:
            raise InvalidInput(
                f"give 2-{MAX_MERGE} distinct keys to keep", hint="the members of one cluster"
            )
        note = validation.reason(reason)
        if not note:
            raise InvalidInput("say why these are not duplicates", hint="e.g. 'different services'")
        members = [self.memories.get(key) for key in names]  # all exist before anything is recorded
        pairs = [(a, b) for n, a in enumerate(names) for b in names[n + 1 :]]
        read = self.distinct.decided(pairs)
        ruling = Ruling(self.ctx, actor)
        for member in members:
            ruling.take(member)
        done = KeptApart(names, len(pairs), note)
        decision = {"actor": actor, "at": ruling.at, "reason": note}
        ruling.record(
            self.ctx.event(actor, "keep_duplicates", names[0], reason=note, details=done.public())
        )
        if not ruling.commit(self.distinct.recording(pairs, decision, read)).applied:
            raise Conflict(_lost("kept apart", ruling), hint=_AGAIN)
        return done


_AGAIN = "find_duplicates again and decide from what it shows; nothing was written"


def _lost(verb: str, ruling: Ruling) -> str:
    """What changed while a decision on duplicates was made (nothing was written)."""
    seen = "; ".join(ruling.changed()) or "a pair of them was kept apart or merged meanwhile"
    return f"the memories changed while they were {verb}: {seen}"
