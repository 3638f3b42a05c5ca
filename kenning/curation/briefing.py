"""The session-start briefing: a bounded digest of what an agent should know about a project.

Sections, in order of importance: the project context; open contradictions touching the project
(blockers: ask the person); the project's graveyard (abandoned approaches); recent knowledge, newest
first; reinstate candidates (deprioritised memories whose hints match the project's current state);
stale memories (old and not recalled lately); suppressed topics; the last maintenance findings.

Superseded and suppressed memories never appear. Each list section has its own cap and every snippet
is cut to ``SNIPPET`` characters. A briefing has a token budget (``budget_tokens``, default
KENNING_BRIEFING_TOKENS; a token is estimated as four characters of its JSON, as recall_index
estimates): when the whole briefing would exceed it, the least important lists are shortened first
until it fits, and ``budget`` reports the budget, the tokens spent and how many items of each list
were left out (``truncated`` says whether any were). The project context is shown whole (its fields
have their own length limits, kenning/curation/projects.py) and the maintenance findings are a fixed
handful of counts, so a budget smaller than those two is exceeded by them alone, and ``spent`` says
so.

The result is typed (``Brief``); ``public()`` is its JSON, the form the budget is measured on.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from kenning.core import query, validation
from kenning.core.errors import NotFound
from kenning.core.models import FEED_DERIVED_ACTOR, FEED_KIND, GLOBAL_PROJECT, Memory, iso
from kenning.core.schema import FIELD_NAMES, NAMESPACES
from kenning.curation.maintenance import Findings, Maintenance
from kenning.curation.projects import Projects
from kenning.language import phrases
from kenning.memory.graveyard import Abandoned, Graveyard
from kenning.memory.suppression import Suppression, Suppressions, hidden_by
from kenning.runtime.context import Context
from kenning.truth.contradictions import Contradictions

DAY = 86_400.0
SNIPPET = 240
BUDGET = 16_000  # characters of the lists' JSON that ``bounded`` keeps by default
CHARS_PER_TOKEN = 4
CAPS = {
    "contradictions": 10,
    "graveyard": 10,
    "recent_knowledge": 10,
    "reinstate_candidates": 5,
    "stale": 5,
    "suppressed": 20,
}
TRIM_ORDER = (
    "stale",
    "suppressed",
    "reinstate_candidates",
    "recent_knowledge",
    "graveyard",
    "contradictions",
)


def snippet(text: str) -> str:
    return text if len(text) <= SNIPPET else text[: SNIPPET - 3] + "..."


ASK = "ask the person which holds, then resolve_contradiction"


@dataclass(frozen=True, slots=True)
class Item:
    """A memory as the briefing lists it (its content cut to ``SNIPPET``)."""

    key: str
    content: str
    project: str
    created_at: str | None
    trust: str
    tags: list[str]


@dataclass(frozen=True, slots=True)
class Candidate(Item):
    """A deprioritised memory whose reinstate hints the project's state names."""

    matched_hints: list[str]
    reason: str | None


@dataclass(frozen=True, slots=True)
class Side:
    key: str
    content: str | None  # None when the memory is gone


@dataclass(frozen=True, slots=True)
class Blocker:
    """An open contradiction touching the project (``ask`` counts in the budget,
    so it is part of the JSON)."""

    id: str
    a: Side
    b: Side
    evidence: dict[str, Any]
    detected_at: str | None
    ask: str = ASK


@dataclass(frozen=True, slots=True)
class Hidden:
    term: str
    reason: str


@dataclass(frozen=True, slots=True)
class Sections:
    """The bounded lists, most important first."""

    contradictions: list[Blocker]
    graveyard: list[Abandoned]
    recent_knowledge: list[Item]
    reinstate_candidates: list[Candidate]
    stale: list[Item]
    suppressed: list[Hidden]

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            f.name: [_plain(x) for x in getattr(self, f.name)] for f in fields(self)
        }
        return out


@dataclass(frozen=True, slots=True)
class Budget:
    """What a briefing was allowed, what it spent (estimated tokens of its whole JSON) and how many
    items of each list the budget left out (lists with none are not named)."""

    tokens: int
    spent: int
    left_out: dict[str, int]


@dataclass(frozen=True, slots=True)
class Brief:
    project: str
    context: (
        dict[str, Any] | None
    )  # the project context's public form (kenning/curation/projects.py)
    sections: Sections
    maintenance: Findings | None
    truncated: bool
    budget: Budget | None = None

    def public(self) -> dict[str, Any]:
        out = {
            "project": self.project,
            "context": self.context,
            **self.sections.public(),
            "maintenance": asdict(self.maintenance) if self.maintenance else None,
            "truncated": self.truncated,
        }
        if self.budget is not None:
            out["budget"] = asdict(self.budget)
        return out


def estimate(value: Any) -> int:
    """Estimated tokens of ``value``'s JSON (four characters a token). Pure."""
    return max(1, (len(json.dumps(value, default=str)) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN)


def _plain(entry: Any) -> dict[str, Any]:
    if isinstance(entry, Abandoned):
        return entry.public()
    out: dict[str, Any] = asdict(entry)
    return out


def item(memory: Memory) -> Item:
    return Item(
        key=memory.key,
        content=snippet(memory.content),
        project=memory.project,
        created_at=iso(memory.created_at),
        trust=memory.trust,
        tags=list(memory.tags),
    )


def bounded(sections: Sections, budget: int = BUDGET) -> tuple[Sections, bool]:
    """Shorten the least important list sections until their JSON fits ``budget``. Pure."""
    out = sections
    truncated = False
    for name in TRIM_ORDER:
        while len(json.dumps(out.public(), default=str)) > budget and getattr(out, name):
            out = replace(out, **{name: getattr(out, name)[:-1]})
            truncated = True
    return out, truncated


MIN_TOKENS = 200
MAX_TOKENS = 50_000


def fitted(brief: Brief, tokens: int) -> Brief:
    """``brief`` with its lists shortened (least important first) so that the whole briefing's
    JSON fits ``tokens``, and its ``Budget``. Pure."""
    # what the lists cannot shorten: the context, the findings, the budget block at its largest
    most = Budget(tokens, tokens, {f.name: CAPS[f.name] for f in fields(Sections)})
    fixed = len(json.dumps(replace(brief, sections=_empty(), budget=most).public(), default=str))
    kept, truncated = bounded(brief.sections, max(0, tokens * CHARS_PER_TOKEN - fixed))
    left_out = {
        f.name: len(getattr(brief.sections, f.name)) - len(getattr(kept, f.name))
        for f in fields(Sections)
        if len(getattr(brief.sections, f.name)) > len(getattr(kept, f.name))
    }
    out = replace(brief, sections=kept, truncated=truncated)
    # the budget block itself is counted (its own figure too, so settle it): what it reports is
    # what the caller reads
    budget = Budget(tokens, 0, left_out)
    for _ in range(3):
        budget = replace(budget, spent=estimate(replace(out, budget=budget).public()))
    return replace(out, budget=budget)


def _empty() -> Sections:
    return Sections([], [], [], [], [], [])


class Briefing:
    def __init__(
        self,
        ctx: Context,
        projects: Projects,
        contradictions: Contradictions,
        graveyard: Graveyard,
        suppressions: Suppressions,
        maintenance: Maintenance,
    ) -> None:
        self.ctx = ctx
        self.projects = projects
        self.contradictions = contradictions
        self.graveyard = graveyard
        self.suppressions = suppressions
        self.maintenance = maintenance

    def briefing(
        self, project: str, *, include_feeds: bool | None = None, budget_tokens: int | None = None
    ) -> Brief:
        """The digest for one project (global memories included where they apply) within
        ``budget_tokens`` (default KENNING_BRIEFING_TOKENS); feed articles count as knowledge
        unless ``include_feeds`` (default KENNING_RECALL_INCLUDE_FEEDS) is false."""
        name = validation.project(project)
        tokens = self.ctx.settings.briefing_tokens if budget_tokens is None else budget_tokens
        validation.bounded_int("budget_tokens", tokens, MIN_TOKENS, MAX_TOKENS)
        feeds = self.ctx.settings.recall_include_feeds if include_feeds is None else include_feeds
        skip = ("context",) if feeds else ("context", FEED_KIND)
        context = self._context(name)
        active = self.suppressions.active()  # read once: every section filters with the same list
        sections = Sections(
            contradictions=self._contradictions(name),
            graveyard=[
                replace(a, reason=snippet(a.reason))
                for a in self.graveyard.all(name, limit=CAPS["graveyard"])
            ],
            recent_knowledge=[item(m) for m in self._recent(name, active, skip)],
            reinstate_candidates=self._reinstate(
                name, str((context or {}).get("state") or ""), active
            ),
            stale=[item(m) for m in self._stale(name, active, skip)],
            suppressed=[Hidden(s.term, s.reason) for s in active][: CAPS["suppressed"]],
        )
        return fitted(Brief(name, context, sections, self._findings(), False), tokens)

    def _context(self, name: str) -> dict[str, Any] | None:
        try:
            return self.projects.get(name).public()
        except NotFound:
            return None

    def _contradictions(self, name: str) -> list[Blocker]:
        # Global memories apply to every project, so their open contradictions are
        # this project's blockers too.
        out = []
        for record in self.contradictions.open_touching(
            {name, GLOBAL_PROJECT}, limit=CAPS["contradictions"]
        ):
            a, b = (self.ctx.store.memories.read(k) for k in (record.a, record.b))
            out.append(
                Blocker(
                    id=record.id,
                    a=Side(record.a, snippet(a.content) if a else None),
                    b=Side(record.b, snippet(b.content) if b else None),
                    evidence=dict(record.evidence),
                    detected_at=iso(record.detected_at),
                )
            )
        return out

    def _search(
        self, namespace: str, clauses: tuple[str, ...], *, sort: str, descending: bool, limit: int
    ) -> list[Memory]:
        search = query.Search(
            index=self.ctx.index,
            namespaces=(namespace,),
            clauses=clauses,
            sort_by=sort,
            descending=descending,
            limit=limit,
            return_fields=FIELD_NAMES,
        )
        return [h.memory for h in self.ctx.store.memories.search(search).hits]

    def _believed(
        self, name: str, state: str, skip: tuple[str, ...] = ("context",)
    ) -> tuple[str, ...]:
        return (
            query.tag("project", [name, GLOBAL_PROJECT]),
            query.tag("state", [state]),
            query.not_tag("trust", ["superseded"]),
            query.not_tag("kind", list(skip)),
            # without the feeds, the facts the LLM extracted from their articles go too
            *((query.not_tag("actor", [FEED_DERIVED_ACTOR]),) if FEED_KIND in skip else ()),
        )

    def _recent(self, name: str, active: list[Suppression], skip: tuple[str, ...]) -> list[Memory]:
        found = self._search(
            "knowledge",
            self._believed(name, "active", skip),
            sort="created_at",
            descending=True,
            limit=CAPS["recent_knowledge"] * 3,
        )
        return [m for m in found if not hidden_by(m, active)][: CAPS["recent_knowledge"]]

    def _reinstate(self, name: str, state_text: str, active: list[Suppression]) -> list[Candidate]:
        if not state_text:
            return []
        out: list[Candidate] = []
        for namespace in NAMESPACES:
            for memory in self._search(
                namespace,
                self._believed(name, "deprioritised"),
                sort="updated_at",
                descending=True,
                limit=100,
            ):
                matched = phrases.found_in(state_text, memory.reinstate_hints)
                if matched and not hidden_by(memory, active):
                    out.append(
                        Candidate(
                            **asdict(item(memory)),
                            matched_hints=matched,
                            reason=memory.state_reason,
                        )
                    )
        return out[: CAPS["reinstate_candidates"]]

    def _stale(self, name: str, active: list[Suppression], skip: tuple[str, ...]) -> list[Memory]:
        cutoff = self.ctx.clock.now() - self.ctx.settings.recency_grace_days * DAY
        clauses = (*self._believed(name, "active", skip), query.numeric("created_at", None, cutoff))
        old: list[Memory] = []
        for namespace in ("knowledge", "episodic", "preference"):
            old += self._search(namespace, clauses, sort="created_at", descending=False, limit=50)
        # the hashes' last_recalled lags by one fold
        live = self.ctx.store.memories.recalls.live(old)
        stale = [m for m in live if m.last_recalled is None or m.last_recalled < cutoff]
        stale.sort(key=lambda m: m.created_at)
        return [m for m in stale if not hidden_by(m, active)][: CAPS["stale"]]

    def _findings(self) -> Findings | None:
        return self.maintenance.last_findings()
