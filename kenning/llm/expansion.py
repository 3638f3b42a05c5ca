"""Query expansion for recall (docs/llm.md): off by default (KENNING_QUERY_EXPANSION).

When on and a key is set, the model rephrases the query (at most KENNING_QUERY_EXPANSION_PHRASINGS
phrasings; one attempt, a hard timeout, short max_tokens). The phrasings are embedded and cached in
Valkey with their vectors (by normalised query, LLM model and embedding model), then searched with
the query's own filters (states, projects, as-of, feeds); what they find is ADDED to the query's
candidates. The original query dominates: a memory it found keeps its own similarity, and a memory
only a phrasing found enters with its similarity to that phrasing times ``WEIGHT``, so it meets the
relevance floor and the suppressions like any other candidate. Failure, timeout, no key or an
exhausted budget: recall goes on without, and the report says why. The report (``used``,
``cached``, ``ms``, ``phrasings``, ``added``, ``reason``, and ``tokens``: the request's budget,
KENNING_QUERY_EXPANSION_MAX_TOKENS of answer, the tokens it spent, asking and answering, 0 when
cached, and the phrasings left out beyond KENNING_QUERY_EXPANSION_PHRASINGS) goes into the recall
response's diagnostics; observers receive (seconds, outcome) for a histogram.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kenning.core.schema import vector_bytes
from kenning.llm.client import Expansion, Llm, LlmOff, LlmUnavailable
from kenning.llm.directives import instruction_like
from kenning.runtime.context import Context
from kenning.store import Hit

WEIGHT = 0.9  # a phrasing's match counts a little less than the query's own
INSTRUCTIONS = (
    "The JSON document holds a developer's question to a memory store of notes about software "
    "work. Write up to {n} short alternative search queries (under 20 words each) that a note "
    "answering it would match: other words for the same thing, the names of the tools, concepts "
    "or error it is about. Do not answer the question."
)
EMPTY = "empty: the model gave no phrasing other than the query"  # cached like any answer
_SPACES = re.compile(r"\s+")
Search = Callable[[list[bytes]], list[Hit]]
# (seconds, outcome: used, cached, or the fallback's reason)
Observer = Callable[[float, str], None]


@dataclass(frozen=True)
class ExpansionReport:
    used: bool
    cached: bool = False
    seconds: float = 0.0
    phrasings: tuple[str, ...] = ()
    added: int = 0
    reason: str | None = None
    budget: int = 0  # max_tokens of the request
    spent: int = 0  # tokens the request used (prompt and answer); 0 from the cache
    left_out: tuple[str, ...] = ()  # phrasings past the limit, never searched

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "used": self.used,
            "cached": self.cached,
            "ms": round(self.seconds * 1000, 1),
            "phrasings": list(self.phrasings),
            "added": self.added,
            "tokens": {
                "budget": self.budget,
                "spent": self.spent,
                "left_out": list(self.left_out),
            },
        }
        if self.reason:
            out["reason"] = self.reason
        return out

    @property
    def outcome(self) -> str:
        if self.reason:
            return self.reason.split(":")[0]
        return "cached" if self.cached else "used"


def normalised(text: str) -> str:
    """The cache's view of a query: case and runs of whitespace do not make a new entry. Pure."""
    return _SPACES.sub(" ", text).strip().lower()


def cleaned(phrasings: list[str], query: str, limit: int) -> tuple[str, ...]:
    """The model's phrasings, stripped, without repeats, the query itself or one that reads as
    instructions (kenning.llm.directives: never searched), at most ``limit``. Pure."""
    seen = {normalised(query)}
    out: list[str] = []
    for phrasing in (p.strip() for p in phrasings):
        if phrasing and normalised(phrasing) not in seen and not instruction_like(phrasing):
            seen.add(normalised(phrasing))
            out.append(phrasing)
    return tuple(out[:limit])


@dataclass(frozen=True)
class Phrased:
    """The phrasings to search (each with its vector), whether they came from the cache, the
    tokens the request spent and the phrasings left out past the limit."""

    phrased: list[tuple[str, bytes]]
    cached: bool
    spent: int = 0
    left_out: tuple[str, ...] = ()


@dataclass
class Expander:
    ctx: Context
    llm: Llm
    observers: list[Observer] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cache = self.ctx.store.expansions

    def widen(
        self, text: str, project: str | None, pool: list[Hit], search: Search
    ) -> tuple[list[Hit], ExpansionReport | None]:
        """``pool`` plus what the phrasings found that it lacks; None when expansion is off."""
        if not self.ctx.settings.query_expansion:
            return pool, None
        started = time.perf_counter()
        budget = self.ctx.settings.query_expansion_max_tokens
        try:
            got = self.phrasings(text, project)
        except LlmUnavailable as exc:
            seconds = time.perf_counter() - started
            return pool, self._done(
                ExpansionReport(False, seconds=seconds, reason=exc.state, budget=budget)
            )
        added = (
            self._added(pool, search([vector for _, vector in got.phrased])) if got.phrased else []
        )
        report = ExpansionReport(
            bool(got.phrased),
            got.cached,
            time.perf_counter() - started,
            tuple(p for p, _ in got.phrased),
            len(added),
            None if got.phrased else EMPTY,
            budget=budget,
            spent=got.spent,
            left_out=got.left_out,
        )
        return pool + added, self._done(report)

    def phrasings(self, text: str, project: str | None) -> Phrased:
        """The phrasings to search for ``text`` (see ``Phrased``); raises LlmUnavailable."""
        settings = self.ctx.settings
        if not self.llm.available:  # not even the cache: without a key the extras are off
            raise LlmOff("the LLM extras are off: no API key")
        models, query = f"{settings.llm_model}|{self.ctx.embedder.model_name}", normalised(text)
        known = self.cache.get(models, query)
        if known is not None:
            return Phrased(known, True)
        answer = self.llm.ask(
            "query_expansion",
            INSTRUCTIONS.format(n=settings.query_expansion_phrasings),
            {"query": text},
            Expansion,
            project=project,
            max_tokens=settings.query_expansion_max_tokens,
            deadline=settings.query_expansion_timeout_seconds,
        )
        every = cleaned(answer.value.queries, text, len(answer.value.queries))
        limit = settings.query_expansion_phrasings
        phrasings = every[:limit]
        vectors = self.ctx.embedder.embed_many(list(phrasings)) if phrasings else []
        phrased = [(p, vector_bytes(v)) for p, v in zip(phrasings, vectors, strict=True)]
        self.cache.put(models, query, phrased, settings.query_expansion_cache_seconds)
        return Phrased(phrased, False, answer.tokens, every[limit:])

    @staticmethod
    def _added(pool: list[Hit], found: list[Hit]) -> list[Hit]:
        """The hits of ``found`` that ``pool`` lacks, best per key, each at
        ``WEIGHT`` x its similarity."""
        known = {hit.memory.key for hit in pool}
        best: dict[str, Hit] = {}
        for hit in found:
            key = hit.memory.key
            weighted = Hit(hit.memory, 1.0 - hit.similarity * WEIGHT)
            if key not in known and (key not in best or weighted.similarity > best[key].similarity):
                best[key] = weighted
        return list(best.values())

    def _done(self, report: ExpansionReport) -> ExpansionReport:
        for observe in self.observers:
            observe(report.seconds, report.outcome)
        return report
