"""Query expansion for recall (docs/llm.md): off by default (KENNING_QUERY_EXPANSION).

When on and a key is set, the model rephrases the query (at most KENNING_QUERY_EXPANSION_PHRASINGS
phrasings; one attempt, a hard timeout, short max_tokens); the phrasings are cached in Valkey by
normalised query and model, embedded and searched with the same filters as the query (states,
projects, as-of, feeds), and what they find is ADDED to the query's own candidates. The original query
dominates: a memory it found keeps its own similarity, and a memory only a phrasing found enters with
its similarity to that phrasing times ``WEIGHT``, so it meets the relevance floor and the suppressions
like any other candidate. Failure, timeout, no key or an exhausted budget: recall goes on without, and
the report says why. The report (``used``, ``cached``, ``ms``, ``phrasings``, ``added``, ``reason``)
goes into the recall response's diagnostics; observers receive (seconds, outcome) for a histogram.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kenning.context import Context
from kenning.llm import Expansion, Llm, LlmOff, LlmUnavailable
from kenning.schema import vector_bytes
from kenning.store import Hit
from kenning.store.llm import ExpansionCache

WEIGHT = 0.9  # a phrasing's match counts a little less than the query's own
INSTRUCTIONS = ("The JSON document holds a developer's question to a memory store of notes about software "
                "work. Write up to {n} short alternative search queries (under 20 words each) that a note "
                "answering it would match: other words for the same thing, the names of the tools, concepts "
                "or error it is about. Do not answer the question.")
_SPACES = re.compile(r"\s+")
Search = Callable[[list[bytes]], list[Hit]]
Observer = Callable[[float, str], None]  # (seconds, outcome: used, cached, or the fallback's reason)


@dataclass(frozen=True)
class ExpansionReport:
    used: bool
    cached: bool = False
    seconds: float = 0.0
    phrasings: tuple[str, ...] = ()
    added: int = 0
    reason: str | None = None

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {"used": self.used, "cached": self.cached, "ms": round(self.seconds * 1000, 1),
                               "phrasings": list(self.phrasings), "added": self.added}
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
    """The model's phrasings, stripped, without repeats or the query itself, at most ``limit``. Pure."""
    seen = {normalised(query)}
    out: list[str] = []
    for phrasing in (p.strip() for p in phrasings):
        if phrasing and normalised(phrasing) not in seen:
            seen.add(normalised(phrasing))
            out.append(phrasing)
    return tuple(out[:limit])


@dataclass
class Expander:
    ctx: Context
    llm: Llm
    observers: list[Observer] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.cache = ExpansionCache(self.ctx.store.client, self.ctx.store.prefix)

    def widen(self, text: str, project: str | None, pool: list[Hit],
              search: Search) -> tuple[list[Hit], ExpansionReport | None]:
        """``pool`` plus what the phrasings found that it lacks; None when expansion is off."""
        if not self.ctx.settings.query_expansion:
            return pool, None
        started = time.perf_counter()
        try:
            phrasings, cached = self.phrasings(text, project)
        except LlmUnavailable as exc:
            return pool, self._done(ExpansionReport(False, seconds=time.perf_counter() - started,
                                                    reason=exc.state))
        added = self._added(pool, phrasings, search) if phrasings else []
        return pool + added, self._done(ExpansionReport(bool(phrasings), cached, time.perf_counter() - started,
                                                        phrasings, len(added)))

    def phrasings(self, text: str, project: str | None) -> tuple[tuple[str, ...], bool]:
        """(phrasings, whether they came from the cache); raises LlmUnavailable."""
        settings = self.ctx.settings
        if not self.llm.available:  # not even the cache: without a key the extras are off
            raise LlmOff("the LLM extras are off: no API key")
        model, query = settings.llm_model, normalised(text)
        known = self.cache.get(model, query)
        if known is not None:
            return tuple(known), True
        answer = self.llm.ask("query_expansion", INSTRUCTIONS.format(n=settings.query_expansion_phrasings),
                              {"query": text}, Expansion, project=project,
                              max_tokens=settings.query_expansion_max_tokens,
                              deadline=settings.query_expansion_timeout_seconds)
        phrasings = cleaned(answer.value.queries, text, settings.query_expansion_phrasings)
        self.cache.put(model, query, list(phrasings), settings.query_expansion_cache_seconds)
        return phrasings, False

    def _added(self, pool: list[Hit], phrasings: tuple[str, ...], search: Search) -> list[Hit]:
        vectors = [vector_bytes(v) for v in self.ctx.embedder.embed_many(list(phrasings))]
        known = {hit.memory.key for hit in pool}
        best: dict[str, Hit] = {}
        for hit in search(vectors):
            key = hit.memory.key
            weighted = Hit(hit.memory, 1.0 - hit.similarity * WEIGHT)
            if key not in known and (key not in best or weighted.similarity > best[key].similarity):
                best[key] = weighted
        return list(best.values())

    def _done(self, report: ExpansionReport) -> ExpansionReport:
        for observe in self.observers:
            observe(report.seconds, report.outcome)
        return report
