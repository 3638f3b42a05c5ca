"""Visibility lifecycle: deprioritise, archive, reinstate, forget -- one at a
time, by query, per project.

States and weights (docs/lifecycle.md): active (1.0) -> deprioritised (0.2) | archived (0.0, never
recalled); deprioritised -> active | archived; archived -> active. Every transition stores its
reason, actor and time on the memory (state_reason, state_actor, state_changed_at) and in the audit
event; a reason is required from everyone (agent, person, maintenance). A memory's
own weight is never touched.

Reinstate hints given to ``deprioritise`` go into a phrase index; a recall whose query contains a
hint as whole words returns the memory flagged ``reinstate_candidate`` (kenning.memory.recall).

Acting by query never acts: ``candidates`` returns the memories above the raw-similarity threshold
for the caller to confirm by key. Bulk project actions preview unless ``confirm`` and then run as FT
queries in pipelined batches, each memory audited.

Hook for other components: ``Lifecycle.transition`` is the single place a state changes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from kenning.core import query, validation
from kenning.core.errors import Conflict, InvalidInput, NotFound
from kenning.core.models import STATES, Memory
from kenning.core.schema import FIELD_NAMES, NAMESPACES, vector_bytes
from kenning.language import phrases
from kenning.memory.memories import ForgetPreview, Forgotten, Memories
from kenning.memory.retention import keep_snapshots
from kenning.memory.suppression import Suppressions, hidden_by
from kenning.runtime.context import Context
from kenning.store import APPLIED, GONE, SWAP_ATTEMPTS, AuditEvent, Hit, Op, Patch, digest, pause

ALLOWED: dict[str, tuple[str, ...]] = {
    "active": ("deprioritised", "archived"),
    "deprioritised": ("active", "archived"),
    "archived": ("active",),
}
MAX_HINTS = 10
MAX_BULK = 100
CANDIDATES = 5
BATCH = 200
# Which states each action by query may act on.
ACTION_STATES: dict[str, tuple[str, ...]] = {
    "deprioritise": ("active",),
    "archive": ("active", "deprioritised"),
    "reinstate": ("deprioritised", "archived"),
    "forget": STATES,
}
PROJECT_ACTIONS: dict[str, tuple[tuple[str, ...], str | None]] = {
    "deprioritise_project": (("active",), "deprioritised"),
    "reinstate_project": (("deprioritised",), "active"),
    "delete_project": (STATES, None),
}


@dataclass(frozen=True)
class Transition:
    """One state change as it was applied."""

    key: str
    before: str
    after: str
    reason: str
    actor: str
    at: float

    def public(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "from": self.before,
            "to": self.after,
            "reason": self.reason,
            "actor": self.actor,
        }


@dataclass(frozen=True, slots=True)
class Candidate:
    """A memory a query points at (RAW similarity at or above ``act_threshold``)."""

    key: str
    similarity: float
    state: str
    project: str
    content: str  # the first 300 characters


@dataclass(frozen=True, slots=True)
class Candidates:
    """What a query names for ``action``, best first; nothing was done
    (the caller confirms by key)."""

    action: str
    found: tuple[Candidate, ...]


@dataclass(frozen=True, slots=True)
class ProjectPreview:
    """A project action not confirmed: how many memories it would touch and a
    sample (none hidden quoted)."""

    action: str
    project: str
    would_affect: int
    sample: tuple[dict[str, str], ...]  # {"key", "state", "content"}


@dataclass(frozen=True, slots=True)
class ProjectDone:
    """A confirmed project action; ``remaining`` > 0 when the per-call cap stopped
    it (or writers added more)."""

    action: str
    project: str
    affected: int
    remaining: int


def state_patch(
    memory: Memory, to: str, *, reason: str, actor: str, at: float, hints: tuple[str, ...] = ()
) -> Patch:
    """The fields a transition sets and removes. Pure; the memory's own
    weight is never part of it."""
    fields = {
        "state": to,
        "state_reason": reason,
        "state_actor": actor,
        "state_changed_at": repr(at),
        "updated_at": repr(at),
    }
    if to == "deprioritised" and hints:
        fields["reinstate_hints"] = json.dumps(list(hints), sort_keys=True)
        return Patch(memory.key, set=fields)
    return Patch(
        memory.key, set=fields, remove=("reinstate_hints",) if to != "deprioritised" else ()
    )


def check_move(current: str, to: str) -> None:
    if to not in ALLOWED.get(current, ()):
        allowed = ", ".join(ALLOWED.get(current, ())) or "nothing"
        raise Conflict(
            f"a memory cannot move from {current} to {to}",
            hint=f"from {current} it can go to {allowed}",
        )


def _count(items: list[str]) -> str:
    return f"{len(items)} memor{'y' if len(items) == 1 else 'ies'}"


def _named(items: list[str], shown: int = 5) -> str:
    """Up to ``shown`` of them by name, then how many more."""
    more = len(items) - shown
    return ", ".join(items[:shown]) + (f" and {more} more" if more > 0 else "")


def _sources(to: str) -> str:
    """The states a memory can move to ``to`` from."""
    return " or ".join(state for state, targets in ALLOWED.items() if to in targets)


def _selection(keys: list[str] | tuple[str, ...], to: str) -> list[str]:
    """The keys of a multi-select move, each once, after checking its size and target."""
    names = list(dict.fromkeys(keys))
    if not names or len(names) > MAX_BULK:
        raise InvalidInput(
            f"select 1 to {MAX_BULK} memories; got {len(names)}",
            hint="tick the memories to change",
        )
    if to not in STATES:
        raise InvalidInput(f"unknown state {to!r}", hint=f"use one of {', '.join(STATES)}")
    return names


def _check_seen(read: list[Memory], seen: Mapping[str, str]) -> None:
    """Refuse a selection decided from states that no longer hold."""
    stale = [
        f"{m.key} ({seen[m.key]} -> {m.state})" for m in read if seen.get(m.key, m.state) != m.state
    ]
    if stale:
        raise Conflict(
            f"{_count(stale)} of the {len(read)} selected changed since you saw them: "
            f"{_named(stale)}; nothing was changed",
            hint="look at them as they are now and apply again",
        )


def _hints(values: list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    given = list(values or [])
    if len(given) > MAX_HINTS:
        raise InvalidInput(f"at most {MAX_HINTS} reinstate hints")
    out = []
    for value in given:
        norm = phrases.normalise(value) if isinstance(value, str) and len(value) <= 200 else ""
        if not norm or len(norm.split()) > phrases.MAX_PHRASE_TOKENS:
            raise InvalidInput(
                f"reinstate hint {value!r} is not usable",
                hint="give 1-8 words, e.g. 'redis cluster'",
            )
        out.append(norm)
    return tuple(dict.fromkeys(out))


class Lifecycle:
    def __init__(self, ctx: Context, memories: Memories, suppressions: Suppressions) -> None:
        self.ctx = ctx
        self.memories = memories
        self.hints = ctx.store.hints
        self.suppressions = suppressions

    # --- one memory -----------------------------------------------------------------------
    def transition(
        self,
        key: str,
        to: str,
        *,
        reason: str | None,
        actor: str,
        hints: list[str] | tuple[str, ...] | None = None,
    ) -> Transition:
        """Move one memory to state ``to`` (Conflict when the move is not
        allowed); reason required."""
        why = validation.reason(reason, required=True) or ""
        wanted = _hints(hints) if to == "deprioritised" else ()
        who = actor or "unknown"
        memory, now = self._move(key, to, why, who, wanted)
        self._after_move(memory, to, who)
        return Transition(key, memory.state, to, why, who, now)

    def _after_move(self, memory: Memory, to: str, who: str) -> None:
        """The audited steps of their own that follow a move."""
        # an archived side closes its contradiction
        if to == "archived" and memory.trust == "disputed":
            self.memories.contradictions.close_for(memory.key, "archived", actor=who)
        # visible again: a conflict that still holds is flagged anew
        elif memory.state == "archived":
            self.memories.contradictions.on_reinstate(memory.key, actor=who)

    def _move(
        self, key: str, to: str, why: str, who: str, wanted: tuple[str, ...]
    ) -> tuple[Memory, float]:
        """Patch the state while it is still the one the move was checked against (compare-and-set,
        retried on a concurrent change); the memory as it was before, and the time of the move."""
        for attempt in range(SWAP_ATTEMPTS):
            memory = self.memories.get(key)
            # again after a collision: the other move may forbid this one
            check_move(memory.state, to)
            now = self.ctx.clock.now()
            change = replace(
                state_patch(memory, to, reason=why, actor=who, at=now, hints=wanted),
                expect={"state": memory.state},
                also=self._hint_ops(memory, wanted),
            )
            event = self._move_event(memory, to, why, who, wanted)
            outcome = self.ctx.store.memories.patch(change, [event])
            if outcome == APPLIED:
                return memory, now
            if outcome == GONE:
                raise NotFound(
                    f"{key} was deleted while it was being changed", hint="nothing was changed"
                )
            pause(attempt)
        raise Conflict(
            f"{key} kept changing state while this move was made; nothing was written",
            hint="retry the call",
        )

    def _hint_ops(self, memory: Memory, wanted: tuple[str, ...] = ()) -> tuple[Op, ...]:
        """The hint index's writes of a move (in the move's unit): drop the memory's
        old hints, add ``wanted``."""
        drop = [
            op
            for hint in memory.reinstate_hints
            for op in self.hints.removing(phrases.normalise(hint), memory.key)
        ]
        return (*drop, *(op for hint in wanted for op in self.hints.adding(hint, memory.key)))

    def transition_many(
        self,
        keys: list[str] | tuple[str, ...],
        to: str,
        *,
        reason: str | None,
        actor: str,
        seen: Mapping[str, str] | None = None,
    ) -> list[Transition]:
        """Move up to ``MAX_BULK`` memories to ``to`` with one reason (the dashboard's bulk
        actions), all or nothing: every move is checked, then every memory moves in ONE unit
        gated on each one's state as read. When a memory cannot move, is no longer in the state
        the caller ``seen`` (key -> state, e.g. what the page showed), or another call moved one
        in between, nothing changes and ``Conflict`` names those memories."""
        why = validation.reason(reason, required=True) or ""
        read = [self.memories.get(key) for key in _selection(keys, to)]
        _check_seen(read, seen or {})
        refused = [f"{m.key} ({m.state})" for m in read if to not in ALLOWED.get(m.state, ())]
        if refused:
            raise Conflict(
                f"{_count(refused)} of the {len(read)} selected cannot move to {to}: "
                f"{_named(refused)}; nothing was changed",
                hint=f"untick them and apply again (only {_sources(to)} can move to {to})",
            )
        who, now = actor or "unknown", self.ctx.clock.now()
        events = [self._move_event(m, to, why, who) for m in read]
        patches = [
            replace(
                state_patch(m, to, reason=why, actor=who, at=now),
                expect={"state": m.state},
                also=self._hint_ops(m),
            )
            for m in read
        ]
        if not self.ctx.store.decide(events, patches=patches).applied:
            moved = self._moved_since(read)
            raise Conflict(
                f"{_count(moved)} of the {len(read)} selected changed meanwhile: "
                f"{_named(moved)}; nothing was changed",
                hint="reload the list, check them and apply again",
            )
        for memory in read:
            self._after_move(memory, to, who)
        return [Transition(m.key, m.state, to, why, who, now) for m in read]

    def _move_event(
        self, memory: Memory, to: str, why: str, who: str, wanted: tuple[str, ...] = ()
    ) -> AuditEvent:
        return self.ctx.event(
            who,
            _ACTION[to],
            memory.key,
            reason=why,
            before=memory.content,
            after=memory.content,
            details={"from": memory.state, "to": to, "reinstate_hints": list(wanted)},
        )

    def _moved_since(self, read: list[Memory]) -> list[str]:
        """Which memories of ``read`` are no longer in the state they were read in."""
        out = []
        for was in read:
            now = self.ctx.store.memories.read(was.key)
            if now is None:
                out.append(f"{was.key} (forgotten)")
            elif now.state != was.state:
                out.append(f"{was.key} ({was.state} -> {now.state})")
        return out or ["one of them (it changed back since)"]

    def reindex_hints(self, memory: Memory) -> None:
        """Re-create the hint index entries of a memory written directly (e.g.
        by a restore). Idempotent."""
        if memory.state == "deprioritised":
            for hint in memory.reinstate_hints:
                self.hints.add(phrases.normalise(hint), memory.key)

    def deprioritise(
        self,
        key: str,
        *,
        reason: str | None,
        actor: str,
        reinstate_hints: list[str] | tuple[str, ...] | None = None,
    ) -> Transition:
        return self.transition(
            key, "deprioritised", reason=reason, actor=actor, hints=reinstate_hints
        )

    def archive(self, key: str, *, reason: str | None, actor: str) -> Transition:
        return self.transition(key, "archived", reason=reason, actor=actor)

    def reinstate(self, key: str, *, reason: str | None, actor: str) -> Transition:
        return self.transition(key, "active", reason=reason, actor=actor)

    def forget(
        self, key: str, *, confirm: bool, actor: str, reason: str | None
    ) -> ForgetPreview | Forgotten:
        """Preview, or (confirm) hard-delete with a snapshot in the audit stream;
        drops its reinstate hints."""
        memory = self.memories.get(key)
        return self.memories.forget_memory(memory, confirm=confirm, actor=actor, reason=reason)

    # --- by query -------------------------------------------------------------------------
    def candidates(
        self,
        action: str,
        text: str,
        *,
        projects: list[str] | tuple[str, ...] | str | None = None,
        namespaces: list[str] | tuple[str, ...] | None = None,
    ) -> Candidates:
        """Memories a query points at, for the caller to confirm by key. Never acts.

        A candidate needs RAW similarity >= ``act_threshold`` (no weight inflates it) and a state
        the action applies to. Memories hidden by a suppression are never offered
        (the caller is an agent).
        """
        if action not in ACTION_STATES:
            raise InvalidInput(
                f"unknown action {action!r}", hint=f"use one of {', '.join(ACTION_STATES)}"
            )
        vector = vector_bytes(self.ctx.embedder.embed(phrases.query_text(text)))
        clauses = [query.tag("state", list(ACTION_STATES[action]))]
        if projects:
            clauses.append(query.tag("project", list(validation.projects(projects))))
        found, suppressed = [], self.suppressions.active()
        for namespace in validation.namespaces(namespaces):
            search = query.Search(
                index=self.ctx.index,
                namespaces=(namespace,),
                clauses=tuple(clauses),
                knn=CANDIDATES,
                vector=vector,
                ef_runtime=max(self.ctx.settings.ef_runtime, CANDIDATES),
                return_fields=("content", "title", "project", "state", "created_at", "distance"),
                limit=CANDIDATES,
            )
            found += [
                h
                for h in self.ctx.store.memories.search(search).hits
                if h.similarity >= self.ctx.settings.act_threshold
                and not hidden_by(h.memory, suppressed)
            ]
        found.sort(key=lambda h: h.similarity, reverse=True)
        return Candidates(action, tuple(_candidate(h) for h in found[:CANDIDATES]))

    # --- per project ----------------------------------------------------------------------
    def deprioritise_project(
        self, project: str, *, confirm: bool, actor: str, reason: str | None
    ) -> ProjectPreview | ProjectDone:
        """Deprioritise every active memory of a project; a preview unless ``confirm``."""
        return self._project(
            "deprioritise_project", project, confirm=confirm, actor=actor, reason=reason
        )

    def reinstate_project(
        self, project: str, *, confirm: bool, actor: str, reason: str | None
    ) -> ProjectPreview | ProjectDone:
        """Reactivate every deprioritised memory of a project; a preview unless ``confirm``."""
        return self._project(
            "reinstate_project", project, confirm=confirm, actor=actor, reason=reason
        )

    def delete_project(
        self, project: str, *, confirm: bool, actor: str, reason: str | None
    ) -> ProjectPreview | ProjectDone:
        """Forget every memory of a project (snapshots kept); a preview unless ``confirm``."""
        return self._project("delete_project", project, confirm=confirm, actor=actor, reason=reason)

    def _project(
        self, action: str, project: str, *, confirm: bool, actor: str, reason: str | None
    ) -> ProjectPreview | ProjectDone:
        name = validation.project(project)
        states, to = PROJECT_ACTIONS[action]
        clauses = (query.tag("project", [name]), query.tag("state", list(states)))
        if not confirm:
            return self._preview(action, name, clauses)
        why = validation.reason(reason, required=True) or ""
        done = self._bulk(clauses, to, why, actor or "unknown", action)
        left = self.ctx.store.memories.count(
            query.Search(index=self.ctx.index, clauses=clauses, limit=0)
        )
        # left > 0: the per-call cap (or new writes) stopped it
        return ProjectDone(action, name, done, left)

    def _preview(self, action: str, project: str, clauses: tuple[str, ...]) -> ProjectPreview:
        """The count covers every matching memory; the sample quotes none a suppression hides."""
        suppressed = self.suppressions.active()
        result = self.ctx.store.memories.search(
            query.Search(  # every namespace: one index
                index=self.ctx.index,
                clauses=clauses,
                sort_by="created_at",
                descending=True,
                limit=5 * len(NAMESPACES),
                return_fields=("content", "title", "state", "created_at"),
            )
        )
        sample = [
            {"key": h.memory.key, "state": h.memory.state, "content": h.memory.content[:200]}
            for h in result.hits
            if not hidden_by(h.memory, suppressed)
        ]
        return ProjectPreview(action, project, result.total, tuple(sample[:5]))

    def _bulk(
        self, clauses: tuple[str, ...], to: str | None, reason: str, actor: str, action: str
    ) -> int:
        """Apply the change in batches until the filter matches nothing (each
        batch leaves the filter)."""
        done = 0
        for _ in range(100_000 // BATCH):
            result = self.ctx.store.memories.search(
                query.Search(
                    index=self.ctx.index, clauses=clauses, limit=BATCH, return_fields=FIELD_NAMES
                )
            )
            if not result.hits:
                break
            done += self._apply([h.memory for h in result.hits], to, reason, actor, action)
        return done

    def _apply(
        self, batch: list[Memory], to: str | None, reason: str, actor: str, action: str
    ) -> int:
        """Move (or forget) each memory of ``batch`` while its state and project are still as
        the search read them: one unit per memory, gated on both, so two bulk actions at once
        (or a bulk action and a single move) never both apply to one memory and each applied
        change has exactly one event. Returns how many applied."""
        now = self.ctx.clock.now()
        events = [self._bulk_event(m, to, reason, actor, action, now) for m in batch]
        if to is None:
            marker = keep_snapshots(self.ctx, batch)
            for event in events:
                event.details["snapshot"] = marker
        read = [{"state": m.state, "project": m.project} for m in batch]
        if to is None:
            applied = self.ctx.store.memories.delete_many(
                [(m.key, [e], self._hint_ops(m)) for m, e in zip(batch, events, strict=True)],
                read,
            )
        else:
            outcomes = self.ctx.store.memories.patch_many(
                [
                    (
                        replace(
                            state_patch(m, to, reason=reason, actor=actor, at=now),
                            expect=guard,
                            also=self._hint_ops(m),
                        ),
                        [e],
                    )
                    for m, e, guard in zip(batch, events, read, strict=True)
                ]
            )
            applied = [outcome == APPLIED for outcome in outcomes]
        moved = [m for m, ok in zip(batch, applied, strict=True) if ok]
        for m in moved:
            # only disputed memories have open records
            if to in (None, "archived") and m.trust == "disputed":
                self.memories.contradictions.close_for(
                    m.key, "forgotten" if to is None else "archived", actor=actor
                )
            elif m.state == "archived" and to is not None:
                self.memories.contradictions.on_reinstate(m.key, actor=actor)
        return len(moved)

    @staticmethod
    def _bulk_event(
        m: Memory, to: str | None, reason: str, actor: str, action: str, at: float
    ) -> AuditEvent:
        details: dict[str, Any] = {"bulk": action}
        if to is not None:
            details.update({"from": m.state, "to": to})
        return AuditEvent(
            actor=actor,
            action=_ACTION.get(to or "", "forget"),
            key=m.key,
            reason=reason,
            at=at,
            before=digest(m.content),
            after=digest(None if to is None else m.content),
            details=details,
        )


_ACTION = {"deprioritised": "deprioritise", "archived": "archive", "active": "reinstate"}


def _candidate(hit: Hit) -> Candidate:
    memory = hit.memory
    return Candidate(
        memory.key, round(hit.similarity, 4), memory.state, memory.project, memory.content[:300]
    )
