"""The recall pipeline (docs/recall.md): embed once, KNN per namespace with prefilters, score, floor, top_k."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kenning import query, scoring, validation
from kenning.context import Context
from kenning.models import GLOBAL_PROJECT, RecallHit
from kenning.schema import FIELD_NAMES, vector_bytes
from kenning.store import Hit

MAX_TOP_K = 50


@dataclass(frozen=True)
class RecallRequest:
    query: str
    namespaces: tuple[str, ...] | list[str] | None = None
    projects: tuple[str, ...] | list[str] | str | None = None
    top_k: int = 5
    include_deprioritised: bool = False
    include_superseded: bool = False
    as_of: str | float | None = None


@dataclass(frozen=True)
class RecallResult:
    hits: tuple[RecallHit, ...]
    warnings: tuple[dict[str, Any], ...] = ()
    notes: tuple[str, ...] = ()
    examined: int = 0

    def public(self, *, full: bool = True) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.warnings:
            out["warnings"] = list(self.warnings)
        out["results"] = [h.public(full=full) for h in self.hits]
        if not self.hits:
            out["results_note"] = "no memory is relevant enough (nothing above the relevance floor)"
        if self.notes:
            out["notes"] = list(self.notes)
        return out


@dataclass(frozen=True)
class Plan:
    """A validated recall request."""

    text: str
    namespaces: tuple[str, ...]
    projects: tuple[str, ...]
    top_k: int
    states: tuple[str, ...]
    include_superseded: bool
    as_of: float | None
    notes: list[str] = field(default_factory=list)


def plan(request: RecallRequest) -> Plan:
    text = validation.content(request.query, limit=2_000)
    states = ("active", "deprioritised") if request.include_deprioritised else ("active",)
    projects = validation.projects(request.projects)
    return Plan(text=text, namespaces=validation.namespaces(request.namespaces),
                projects=projects + (GLOBAL_PROJECT,) if projects else (),
                top_k=validation.bounded_int("top_k", request.top_k, 1, MAX_TOP_K), states=states,
                include_superseded=request.include_superseded,
                as_of=validation.timestamp("as_of", request.as_of))


class Recaller:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        s = ctx.settings
        self.policy = scoring.RecencyPolicy(s.recency_grace_days, s.recency_step, s.recency_step_days,
                                            s.recency_floor)

    def recall(self, request: RecallRequest) -> RecallResult:
        p = plan(request)
        vector = vector_bytes(self.ctx.embedder.embed(p.text))
        candidates = self.candidates(p, vector)
        hits = self.rank(p, candidates)
        return RecallResult(hits=tuple(hits[:p.top_k]), notes=tuple(p.notes), examined=len(candidates))

    def clauses(self, p: Plan) -> tuple[str, ...]:
        clauses = [query.tag("state", list(p.states))]
        if p.projects:
            clauses.append(query.tag("project", list(p.projects)))
        if not p.include_superseded and p.as_of is None:
            clauses.append(query.not_tag("trust", ["superseded"]))
        if p.as_of is not None:
            clauses.append(query.numeric("created_at", None, p.as_of))
        return tuple(clauses)

    def candidates(self, p: Plan, vector: bytes) -> list[Hit]:
        """KNN per namespace; with as_of, over-fetch because valid time is checked after the search."""
        k = p.top_k * (4 if p.as_of is not None else 2) + 5
        clauses = self.clauses(p)
        out: list[Hit] = []
        for namespace in p.namespaces:
            search = query.Search(index=self.ctx.index(namespace), clauses=clauses, knn=k, vector=vector,
                                  ef_runtime=max(self.ctx.settings.ef_runtime, k),
                                  return_fields=(*FIELD_NAMES, "distance"), limit=k)
            out += self.ctx.store.memories.search(search).hits
        if p.as_of is not None:
            out = [h for h in out if _valid_at(h, p.as_of)]
        return out

    def rank(self, p: Plan, candidates: list[Hit]) -> list[RecallHit]:
        floor = self.ctx.settings.relevance_floor
        now = self.ctx.clock.now()
        seen: set[str] = set()
        ranked: list[RecallHit] = []
        for hit in candidates:
            if hit.memory.key in seen or hit.similarity < floor:
                continue
            seen.add(hit.memory.key)
            ranked.append(self.score(hit, now))
        ranked.sort(key=lambda h: h.score, reverse=True)
        return ranked

    def score(self, hit: Hit, now: float, *, target_date: float | None = None) -> RecallHit:
        m = hit.memory
        factors = {
            "visibility": scoring.visibility(m.state, m.weight),
            "recency": scoring.recency(m.created_at, now, self.policy),
            "experience": m.experience_weight,
            "temporal": scoring.temporal(m.event_date, target_date),
        }
        score = scoring.combine(hit.similarity, *factors.values())
        weak = hit.similarity < self.ctx.settings.relevance_floor + self.ctx.settings.weak_match_margin
        return RecallHit(memory=m, similarity=hit.similarity, score=score, weak_match=weak, factors=factors)


def _valid_at(hit: Hit, at: float) -> bool:
    m = hit.memory
    starts = m.valid_from if m.valid_from is not None else m.created_at
    return starts <= at and (m.valid_to is None or m.valid_to > at)

