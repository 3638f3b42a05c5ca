"""The recall pipeline (docs/recall.md).

graveyard warnings, hints and suppressions (looked up while the query embeds) -> embed once -> KNN
per namespace with state/project/as-of prefilters, plus a lexical pass for exact identifiers (every
KNN in one round trip, the rows kept read in a second) -> drop suppressed -> relevance floor on RAW
similarity -> score = relevance x visibility x recency x experience x temporal -> facts collapse
into their source, dedupe by key -> reinstate candidates (hint matched) -> top_k
-> recall log + counters.
"""

from __future__ import annotations

import functools
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import replace
from typing import Any

import numpy as np

from kenning.core import query
from kenning.core.models import FEED_DERIVED_ACTOR, FEED_KIND, Memory, RecallHit
from kenning.core.schema import vector_bytes
from kenning.language import overlap, phrases, substance, temporal
from kenning.llm.expansion import Expander
from kenning.memory import scoring, staleness
from kenning.memory.confidence import Confidence, Evidence, Thresholds, judge
from kenning.memory.graveyard import Graveyard
from kenning.memory.recall_log import RecallLog
from kenning.memory.recall_plan import (
    CAPITALS_ONLY,
    Plan,
    RecallRequest,
    exact,
    in_period,
    is_code,
    plan,
    says_asked,
)
from kenning.memory.recall_result import RecallResult
from kenning.memory.suppression import Suppression, Suppressions, hidden_by, kept_as_history
from kenning.runtime.context import Context
from kenning.store import Hit, Near, SearchResult

# the request and its plan live in recall_plan; the doors and the bench import them from here
__all__ = [
    "Plan",
    "RecallRequest",
    "RecallResult",
    "Recaller",
    "exact",
    "history_notes",
    "is_code",
    "plan",
    "select",
]

MAX_REINSTATE = 3
LOOKUP_THREADS = 4
MAX_POOL = 200  # the most rows one KNN of a recall asks for
OVERFETCH = 3  # a recall's KNN asks for OVERFETCH x top_k + 10 rows (OVERFETCH_AS_OF with as_of)
OVERFETCH_AS_OF = 4
WINDOW_OVERFETCH = 6  # the date window's KNN asks for WINDOW_OVERFETCH x top_k + 10 rows


class Recaller:
    def __init__(
        self,
        ctx: Context,
        graveyard: Graveyard,
        suppressions: Suppressions,
        log: RecallLog,
        expander: Expander,
    ) -> None:
        self.ctx = ctx
        # query expansion (kenning.llm.expansion): off unless KENNING_QUERY_EXPANSION
        self.expander = expander
        s = ctx.settings
        self.policy = scoring.RecencyPolicy(
            s.recency_grace_days, s.recency_step, s.recency_step_days, s.recency_floor
        )
        self.limits = Thresholds(
            weak=s.relevance_floor + s.weak_match_margin,
            lead=s.confident_lead,
            unmatched=s.unmatched_identifier_similarity,
            stranger=s.unknown_name_similarity,
            unrelated=s.no_overlap_similarity,
        )
        self.graveyard = graveyard
        self.suppressions = suppressions
        self.log = log
        self.contradictions = ctx.store.contradictions
        # The look-ups wait on Valkey while the embedding computes (ONNX Runtime releases the GIL):
        # a few threads per engine, started on first use; a recall waits for both
        # before it ranks anything.
        self._lookups = ThreadPoolExecutor(
            max_workers=LOOKUP_THREADS, thread_name_prefix="kenning-lookup"
        )

    def recall(self, request: RecallRequest) -> RecallResult:
        """The answer to ``request``; on a cluster with a shard down, a typed error naming it."""
        with self.ctx.store.shards_named():
            return self._recall(request)

    def _recall(self, request: RecallRequest) -> RecallResult:
        now = self.ctx.clock.now()
        p = plan(request, now, feeds_default=self.ctx.settings.recall_include_feeds)
        # independent of the embedding, by contract
        looking = self._lookups.submit(self.look_up, p.text)
        try:
            embedded = self.ctx.embedder.embed(p.embedded or p.text)
        except BaseException:
            # the embedding's error is the one reported; the look-up never outlives the call
            wait([looking])
            raise
        abandoned, hinted, suppressed = looking.result()
        warnings = tuple(a.public() for a in self.graveyard.warnings(abandoned))
        vector = vector_bytes(embedded)
        found, neighbourhood, unknown = self.pool(p, vector)
        pool, expansion = self.expander.widen(
            p.text, _project(p), found, functools.partial(self.widened, p)
        )
        visible, suppressed_counts, hidden = self.unsuppressed(p, pool, suppressed)
        query_vector = np.asarray(embedded, dtype=np.float32)
        ranked = self.collapse(p, self.rank(p, visible, now), suppressed)
        # "as of" a past moment the newer statement may not exist yet: no change is known then
        changes = staleness.open_changes(self.contradictions, ranked) if p.as_of is None else []
        if changes:
            ranked = staleness.newer_first(
                ranked, changes, functools.partial(self._newer, p, query_vector, suppressed, now)
            )
        flagged = self.reinstate_candidates(p, hinted, query_vector, suppressed, now)
        chosen = select(ranked, flagged, p.top_k)
        recorded = {str(w.get("memory")) for w in warnings}
        verdict = self.judge(p, chosen, neighbourhood, recorded, unknown)
        hits = self.record(p, chosen if verdict.confident else [], now)
        return RecallResult(
            hits=tuple(hits),
            confidence=verdict,
            weak=() if verdict.confident else tuple(chosen),
            warnings=warnings,
            notes=(*p.notes, *history_notes(hits, suppressed)),
            examined=len(pool),
            suppressed=suppressed_counts,
            hidden=hidden,
            expansion=expansion,
            window=p.period,
            window_only=p.period_only,
        )

    def judge(
        self,
        p: Plan,
        chosen: list[RecallHit],
        neighbourhood: tuple[float, ...],
        recorded: set[str],
        unknown: frozenset[str] = frozenset(),
    ) -> Confidence:
        """Whether ``chosen`` is a confident answer (kenning.memory.confidence).

        An identifier held by a hit is evidence for it. One held by none is evidence against it
        only when it is a real identifier (``is_code``: "ERR-4999", "GraphQL", "v3.1") that
        no memory holds at all (``unknown``: its words are in none). A name written with a hyphen
        is not: "data-validation" or "front-end" are ordinary compounds a paraphrase uses
        and its answer need not (measured: counting them cost the paraphrase family 0.06 of
        recall@5, docs/benchmarks.md). A word in capitals ("ORM", a shouted "PEOPLE") is a word."""
        asked = [i for i in p.identifiers if not CAPITALS_ONLY.fullmatch(i)]
        held = any(exact(h.memory.content, i) for h in chosen for i in asked)
        missing = any(is_code(i) and i in unknown for i in asked)
        terms = overlap.key_terms(p.text)
        evidence = Evidence(
            similarities=[h.similarity for h in chosen],
            neighbourhood=neighbourhood,
            named=held or missing,
            held=held,
            window=p.period_only and bool(chosen),
            hinted=any(h.reinstate_candidate for h in chosen),
            warned=any(h.memory.key in recorded for h in chosen),
            stranger=any(name in unknown for name in p.names),
            coverage=max((overlap.coverage(terms, h.memory.content) for h in chosen), default=0.0),
        )
        return judge(evidence, self.limits)

    def unsuppressed(
        self, p: Plan, pool: list[Hit], suppressed: list[Suppression]
    ) -> tuple[
        list[Hit], tuple[tuple[str, int], ...], tuple[tuple[str, float, tuple[str, ...]], ...]
    ]:
        """The hits no suppression hides; per term how many relevant memories it hid (those that
        would have passed the relevance floor: what the floor dropped is not the suppression's
        doing); and the hidden ones themselves (key, similarity, terms) for a person's view."""
        visible: list[Hit] = []
        counted: dict[str, set[str]] = {}
        hidden: list[tuple[str, float, tuple[str, ...]]] = []
        floor = self.ctx.settings.relevance_floor
        for hit in pool:
            terms = tuple(hidden_by(hit.memory, suppressed)) if suppressed else ()
            if not terms:
                visible.append(hit)
            elif hit.similarity >= floor or any(exact(hit.memory.content, i) for i in p.codes):
                hidden.append((hit.memory.key, round(hit.similarity, 4), terms))
                for name in terms:
                    counted.setdefault(name, set()).add(hit.memory.key)
        return (
            visible,
            tuple((name, len(keys)) for name, keys in sorted(counted.items())),
            tuple(hidden),
        )

    def look_up(
        self, text: str
    ) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]], list[Suppression]]:
        """(graveyard entries, reinstate-hint entries, suppressions) for ``text`` in one round trip
        (a second one only when the query names an abandoned approach or a hint).

        Read fresh on every recall, never cached: a suppression added by another process hides its
        memories from the very next recall.
        """
        suppressed, (abandoned, hinted) = self.ctx.store.look_up(phrases.ngrams(text))
        return abandoned, hinted, Suppressions.parse_active(suppressed)

    def record(self, p: Plan, hits: list[RecallHit], now: float) -> list[RecallHit]:
        """The hits with the counts this recall gives them (the live counts they were read with +
        1); the recall log entry and the counter touches are written behind the reply, in one
        round trip (``Store.log_recall``). The counters live beside the memory
        hashes, which stay unwritten."""
        # the entry is built (and encoded) by whoever writes it: behind the reply, as a rule
        entry = functools.partial(
            self.log.entry,
            p.text,
            hits,
            actor=p.actor,
            projects=p.projects,
            at=self.ctx.clock.now(),
        )
        touched = self.ctx.store.log_recall(
            entry, self.ctx.settings.recall_log_max_entries, [h.memory for h in hits], now
        )
        return [replace(h, memory=m) for h, m in zip(hits, touched, strict=True)]

    def clauses(self, p: Plan, states: tuple[str, ...] | None = None) -> tuple[str, ...]:
        clauses = [query.tag("state", list(states or p.states))]
        if p.projects:
            clauses.append(query.tag("project", list(p.projects)))
        if not p.include_superseded and p.as_of is None:
            clauses.append(query.not_tag("trust", ["superseded"]))
        if p.as_of is not None:
            clauses.append(query.numeric("created_at", None, p.as_of))
        if not p.include_feeds:  # the articles and the facts the LLM extracted from them
            clauses.append(query.not_tag("kind", [FEED_KIND]))
            clauses.append(query.not_tag("actor", [FEED_DERIVED_ACTOR]))
        return tuple(clauses)

    def _search(self, p: Plan, vector: bytes, clauses: tuple[str, ...], k: int) -> query.Search:
        """One KNN over the plan's namespaces (one index holds them all; ``MemoryStore.nearest``
        sets what it returns). ``k`` is what each namespace's KNN read when each had its own
        index: one KNN of that k keeps every quality number of the benchmark (bench/FINDINGS.md,
        "One index over every namespace (h1)")."""
        k = min(MAX_POOL, k)
        return query.Search(
            index=self.ctx.index,
            namespaces=p.namespaces,
            clauses=clauses,
            knn=k,
            vector=vector,
            ef_runtime=max(self.ctx.settings.ef_runtime, k),
            limit=k,
        )

    def pool(self, p: Plan, vector: bytes) -> tuple[list[Hit], tuple[float, ...], frozenset[str]]:
        """The candidates, the identifier hits and the window's: every KNN in one round trip,
        the rows kept in a second; the raw similarity of every row the candidates' KNN returned
        (the query's neighbourhood) and the identifiers whose words no memory holds (the
        verdict's evidence)."""
        lexical = self.lexical(p, vector)
        named = self.named(p, vector)
        nears = self.candidates(p, vector) + lexical + named + self.window(p, vector)
        results = self.ctx.store.memories.nearest(nears)
        searched = [i for i in p.identifiers if phrases.search_words(i)]
        searched += [n for n in p.names if phrases.search_words(n)]
        unknown = frozenset(
            ident
            for ident, found in zip(searched, results[1 : 1 + len(searched)], strict=True)
            if found.total == 0
        )
        return _valid(p, results), tuple(1.0 - d for d in results[0].distances), unknown

    def widened(self, p: Plan, vectors: list[bytes]) -> list[Hit]:
        """Query expansion's search: one KNN of top_k (scaled) for each phrasing's vector (they
        only add candidates), under the same filters and floor cut as the
        query's, in one round trip."""
        cut = 1.0 - self.ctx.settings.relevance_floor
        nears = [
            Near(self._search(p, v, self.clauses(p), p.top_k), max_distance=cut) for v in vectors
        ]
        return _valid(p, self.ctx.store.memories.nearest(nears))

    def candidates(self, p: Plan, vector: bytes) -> list[Near]:
        """One KNN; over-fetch because suppression, valid time and collapsing run afterwards."""
        k = p.top_k * (OVERFETCH_AS_OF if p.as_of is not None else OVERFETCH) + 10
        # rows under the floor on raw similarity never rank, so they are not even read (the
        # identifier searches of ``lexical`` have no cut: a row under the floor may still
        # rank through its identifier)
        cut = 1.0 - self.ctx.settings.relevance_floor
        return [Near(self._search(p, vector, self.clauses(p), k), max_distance=cut)]

    def window(self, p: Plan, vector: bytes) -> list[Near]:
        """The memories dated inside the period the query names, nearest first: a KNN prefiltered
        by ``event_date`` (or ``created_at``) in the window, so a date is a way in, not only a
        boost. A question that names only a period reads them whatever their similarity
        (``rank`` keeps only them); one with a topic too, those above the floor."""
        if p.period is None:
            return []
        start, end = p.period.start, p.period.end
        inside = query.any_of(
            query.numeric("event_date", start, end, exclusive_high=True),
            query.numeric("created_at", start, end, exclusive_high=True),
        )
        k = p.top_k * WINDOW_OVERFETCH + 10
        cut = None if p.period_only else 1.0 - self.ctx.settings.relevance_floor
        return [Near(self._search(p, vector, (*self.clauses(p), inside), k), max_distance=cut)]

    def lexical(self, p: Plan, vector: bytes) -> list[Near]:
        """For each identifier: the memories whose TEXT holds all its words,
        ranked by vector distance.

        Only hits that contain the identifier verbatim are read in full (the
        TEXT index stems and splits).
        """
        out: list[Near] = []
        for ident in p.identifiers:
            if words := phrases.search_words(ident):
                clauses = self.clauses(p) + tuple(query.text_any("content", [w]) for w in words)
                holds = functools.partial(_holds, ident)
                out.append(
                    Near(
                        self._search(p, vector, clauses, p.top_k + 5),
                        fields=("content",),
                        accept=holds,
                    )
                )
        return out

    def named(self, p: Plan, vector: bytes) -> list[Near]:
        """For each proper name the query names: whether any memory in scope holds its words (one
        row asked for, none read: only the count is evidence)."""
        out: list[Near] = []
        for name in p.names:
            if words := phrases.search_words(name):
                forms = (
                    query.text_any("content", [w, w[:-1]] if _plural(w) else [w]) for w in words
                )
                out.append(
                    Near(self._search(p, vector, (*self.clauses(p), *forms), 1), accept=_never)
                )
        return out

    def rank(self, p: Plan, candidates: list[Hit], now: float) -> list[RecallHit]:
        """Floor on RAW similarity (an exact identifier match passes it), score,
        dedupe by key (best kept)."""
        floor = self.ctx.settings.relevance_floor
        best: dict[str, RecallHit] = {}
        for hit in candidates:
            matched = any(exact(hit.memory.content, i) for i in p.codes)
            dated = p.period_only and p.period is not None and in_period(hit.memory, p.period)
            if p.period_only and not dated:
                continue  # a question about a period alone is answered from that period
            if hit.similarity < floor and not matched and not dated:
                continue
            # a period-only question's memory that says what it asks is lifted like an identifier:
            # its similarity to "what did we decide" is near nothing, and small talk's is not
            asked = dated and says_asked(p, hit.memory.content)
            scored = self.score(hit, now, period=p.period, lexical=matched or asked)
            if dated:
                scored = replace(scored, weak_match=False)  # the window is its evidence
            if hit.memory.key not in best or scored.score > best[hit.memory.key].score:
                best[hit.memory.key] = scored
        return sorted(best.values(), key=lambda h: h.score, reverse=True)

    def score(
        self,
        hit: Hit,
        now: float,
        *,
        period: temporal.Period | None = None,
        lexical: bool = False,
        as_active: bool = False,
    ) -> RecallHit:
        """One hit's score; ``factors`` records each multiplier (and
        ``relevance`` when lexical lifted it)."""
        m = hit.memory
        factors = {
            "visibility": scoring.visibility("active" if as_active else m.state, m.weight),
            "recency": scoring.recency(m.created_at, now, self.policy),
            "experience": m.experience_weight,
            "substance": substance.substance(m.content),
            "temporal": 1.0
            if period is None
            else scoring.temporal_window(
                m.event_date if m.event_date is not None else m.created_at, period.start, period.end
            ),
        }
        relevance = scoring.lexical(hit.similarity, lexical, self.ctx.settings.lexical_boost)
        score = scoring.combine(relevance, *factors.values())
        if lexical:
            factors["relevance"] = relevance
        weak = (
            hit.similarity < self.ctx.settings.relevance_floor + self.ctx.settings.weak_match_margin
        )
        return RecallHit(
            memory=m,
            similarity=hit.similarity,
            score=score,
            weak_match=weak and not lexical,
            factors=factors,
        )

    def collapse(
        self, p: Plan, ranked: list[RecallHit], suppressed: list[Suppression]
    ) -> list[RecallHit]:
        """A fact stands for its source: the source takes the fact's place
        (best score kept per key).

        Each source is read once per recall, however many of its facts matched.
        """
        best: dict[str, RecallHit] = {}
        sources: dict[str, Memory | None] = {}
        for hit in ranked:
            source_key = hit.memory.source_key
            if source_key and source_key not in sources:
                sources[source_key] = self.ctx.store.memories.read(source_key)
            source = sources[source_key] if source_key else None
            if source is not None and source.kind == FEED_KIND and not p.include_feeds:
                continue  # a fact derived from a feed article (written before the actor said so)
            source = self._shown(p, source, suppressed) if source is not None else None
            chosen = replace(hit, memory=source) if source is not None else hit
            key = chosen.memory.key
            if key not in best or chosen.score > best[key].score:
                best[key] = chosen
        return sorted(best.values(), key=lambda h: h.score, reverse=True)

    @staticmethod
    def _shown(p: Plan, source: Memory, suppressed: list[Suppression]) -> Memory | None:
        """The source a fact collapses into, when the recall may show it."""
        if source.kind == FEED_KIND and not p.include_feeds:
            return None
        if source.state not in p.states or hidden_by(source, suppressed):
            return None
        if p.projects and source.project not in p.projects:
            return None
        if source.trust == "superseded" and not p.include_superseded:
            return None
        return source

    def reinstate_candidates(
        self,
        p: Plan,
        found: dict[str, dict[str, str]],
        embedded: np.ndarray[Any, Any],
        suppressed: list[Suppression],
        now: float,
    ) -> list[RecallHit]:
        """Deprioritised memories whose reinstate hint the query names (whole
        words), scored as if active.

        ``found`` is the hint index's look-up of the query's n-grams (``look_up``). No relevance
        floor: the named hint is the relevance signal. Flagged ``reinstate_candidate``.
        """
        out: list[RecallHit] = []
        for key in sorted({m for entries in found.values() for m in entries}):
            memory = self.ctx.store.memories.read(key)
            if memory is None:  # forgotten elsewhere: clean its hint entries up lazily
                for hint, entries in found.items():
                    if key in entries:
                        self.ctx.store.hints.remove(hint, key)
                continue
            if not self._may_reinstate(p, memory, suppressed):
                continue
            stored = self.ctx.store.memories.read_vector(key)
            similarity = float(np.dot(embedded, stored)) if stored is not None else 0.0
            scored = self.score(Hit(memory, 1.0 - similarity), now, period=p.period, as_active=True)
            out.append(replace(scored, reinstate_candidate=True, weak_match=False))
        return sorted(out, key=lambda h: h.score, reverse=True)[:MAX_REINSTATE]

    def _newer(
        self,
        p: Plan,
        embedded: np.ndarray[Any, Any],
        suppressed: list[Suppression],
        now: float,
        key: str,
    ) -> RecallHit | None:
        """The newer side of an open value change that did not match on its own, scored from its
        stored vector; None when the plan may not show it (see ``_shown``)."""
        read = self.ctx.store.memories.read(key)
        memory = self._shown(p, read, suppressed) if read is not None else None
        stored = self.ctx.store.memories.read_vector(key) if memory is not None else None
        if memory is None or stored is None or memory.namespace not in p.namespaces:
            return None
        if p.period_only and p.period is not None and not in_period(memory, p.period):
            return None  # a question about a period alone is answered from that period
        return self.score(Hit(memory, 1.0 - float(np.dot(embedded, stored))), now, period=p.period)

    def _may_reinstate(self, p: Plan, memory: Memory, suppressed: list[Suppression]) -> bool:
        return (
            memory.state == "deprioritised"
            and memory.namespace in p.namespaces
            and (not p.projects or memory.project in p.projects)
            and (p.as_of is None or memory.created_at <= p.as_of)
            and (p.include_superseded or memory.trust != "superseded")
            and not hidden_by(memory, suppressed)
        )


def history_notes(hits: list[RecallHit], suppressed: list[Suppression]) -> list[str]:
    """A note per abandoned approach whose suppression let a result through because it records
    the replacement or why it was dropped (kenning.memory.suppression.kept_as_history). Pure."""
    shown: dict[str, int] = {}
    for hit in hits:
        for term in kept_as_history(hit.memory, suppressed):
            shown[term] = shown.get(term, 0) + 1
    return [
        f"'{term}' is suppressed (abandoned): {n} result(s) shown record its replacement or why"
        " it was dropped, not a recommendation"
        for term, n in sorted(shown.items())
    ]


def select(ranked: list[RecallHit], flagged: list[RecallHit], top_k: int) -> list[RecallHit]:
    """top_k results: reinstate candidates are guaranteed a slot, the rest by
    score; never padded. Pure."""
    keep = flagged[:top_k]
    taken = {h.memory.key for h in keep}
    rest = [h for h in ranked if h.memory.key not in taken][: top_k - len(keep)]
    return sorted(keep + rest, key=lambda h: h.score, reverse=True)


def _plural(word: str) -> bool:
    return len(word) > 3 and word.endswith("s") and not word.endswith("ss")


def _never(_row: dict[str, str]) -> bool:
    return False


def _holds(identifier: str, row: dict[str, str]) -> bool:
    return exact(row.get("content", ""), identifier)


def _project(p: Plan) -> str | None:
    """The project an expansion's tokens are counted to: the first one asked for (None: all)."""
    return p.projects[0] if p.projects else None


def _valid(p: Plan, results: list[SearchResult]) -> list[Hit]:
    """The hits of ``results``, less those not valid at the plan's ``as_of``."""
    out = [hit for result in results for hit in result.hits]
    return out if p.as_of is None else [h for h in out if _valid_at(h, p.as_of)]


def _valid_at(hit: Hit, at: float) -> bool:
    m = hit.memory
    starts = m.valid_from if m.valid_from is not None else m.created_at
    return starts <= at and (m.valid_to is None or m.valid_to > at)
