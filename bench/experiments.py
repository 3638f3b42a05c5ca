"""Retrieval experiments outside the recall pipeline: can anything but the embedding model lift
paraphrase recall and no-answer abstention? (docs/benchmarks.md, "The misses").

``python -m bench.experiments --size 10k`` embeds the corpus with the configured embedder, builds
the families exactly as a benchmark run does (same seed, same order), and for every query computes
the exact cosine similarity to every memory of its project plus the global ones -- no index, no HNSW
approximation. It then scores strategies on the same numbers and prints one line per strategy:
recall@5 of (a) near-verbatim, (b) paraphrase, (c) cross-project distractor, and abstention on (g).

- ``floor F``: the pipeline's rule, an absolute floor on raw similarity;
- ``z >= Z & floor F``: a relative floor, the best hit must stand Z standard deviations above the
  project's background similarity;
- ``bm25 W & floor F``: hybrid ranking, similarity plus W times a saturated BM25
  score of the same memories;
- ``stripped & floor F``: the query without its question scaffolding ("how do I", "why did we").
"""

from __future__ import annotations

import argparse
import math
import random
import re
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from bench import families
from bench.corpus import GLOBAL, Corpus, generate
from kenning.core.settings import load_settings
from kenning.runtime.embedding import Embedder, load_embedder

Scores = np.ndarray[Any, Any]
FLOORS = (0.0, 0.2, 0.25, 0.3)
_STOP = frozenset(
    (
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "by",
        "at",
        "from",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "this",
        "that",
        "these",
        "those",
        "do",
        "does",
        "did",
        "how",
        "what",
        "why",
        "which",
        "who",
        "where",
        "when",
        "i",
        "we",
        "our",
        "you",
        "my",
        "me",
        "us",
        "can",
        "may",
        "should",
        "must",
        "not",
        "no",
        "as",
        "into",
        "about",
        "ever",
        "any",
        "there",
        "here",
    )
)
_SCAFFOLD = re.compile(
    r"^(how (do|does|did|should|can|are|is|many|fast|big|long|strict) (i|we|you|a|the)?\s*|what "
    r"(is|are|was|do|does|did|should|must)?\s*(the|a|our|i)?\s*|why "
    r"(did|do|does|is|are|was|were|can't|didn't|don't|haven't|isn't|couldn't)?\s*"
    r"(we|the|a|our|i|you)?\s*|which "
    r"|where (is|are|does|do)?\s*(the|our)?\s*|walk me through |can (i|we) |is it |may i |did "
    r"(we|anyone|a) (ever )?|have we |was |are )",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Scored:
    """One query: its targets and, per candidate memory of its project
    (+ global), the similarity."""

    targets: tuple[str, ...]
    uids: tuple[str, ...]
    similarity: Scores
    stripped: Scores
    bm25: Scores


def words(text: str) -> list[str]:
    """Lower-cased content words with a crude plural/tense strip. Pure."""
    out: list[str] = []
    for raw in re.findall(r"[a-z0-9]+", text.lower()):
        if raw in _STOP or len(raw) < 2:
            continue
        cut = next(
            (
                len(x)
                for x in ("ing", "ed", "es", "s")
                if raw.endswith(x) and len(raw) - len(x) >= 3
            ),
            0,
        )
        out.append(raw[: len(raw) - cut])
    return out


def stripped(text: str) -> str:
    """The query without its leading question scaffolding. Pure."""
    return _SCAFFOLD.sub("", text).rstrip("?. ") or text


class Bm25:
    def __init__(self, texts: list[str]) -> None:
        self.docs = [Counter(words(t)) for t in texts]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.average = sum(self.lengths) / max(len(self.docs), 1)
        self.df = Counter(w for d in self.docs for w in d)

    def scores(self, query: str, rows: list[int], k1: float = 1.2, b: float = 0.75) -> Scores:
        terms = set(words(query))
        out = np.zeros(len(rows))
        n = len(self.docs)
        for slot, row in enumerate(rows):
            doc = self.docs[row]
            for term in terms & doc.keys():
                idf = math.log(1 + (n - self.df[term] + 0.5) / (self.df[term] + 0.5))
                tf = doc[term]
                out[slot] += (
                    idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * self.lengths[row] / self.average))
                )
        return out


def score_all(
    corpus: Corpus, embedder: Embedder, queries: dict[str, list[families.Query]]
) -> dict[str, list[Scored]]:
    items = corpus.items
    matrix = np.stack(embedder.embed_many([i.content for i in items]))
    bm25 = Bm25([i.content for i in items])
    rows_of: dict[str, list[int]] = {}
    for row, item in enumerate(items):
        rows_of.setdefault(item.project, []).append(row)
    out: dict[str, list[Scored]] = {}
    for family, batch in queries.items():
        out[family] = []
        for query in batch:
            rows = rows_of[query.project or GLOBAL] + rows_of[GLOBAL]
            out[family].append(
                Scored(
                    targets=query.targets,
                    uids=tuple(items[r].uid for r in rows),
                    similarity=matrix[rows] @ embedder.embed(query.text),
                    stripped=matrix[rows] @ embedder.embed(stripped(query.text)),
                    bm25=bm25.scores(query.text, rows),
                )
            )
    return out


# per candidate: the ranking score, -inf where the candidate is dropped
Rule = Callable[[Scored], Scores]


def evaluate(scored: dict[str, list[Scored]], rule: Rule) -> dict[str, float]:
    result: dict[str, float] = {}
    for family in ("a", "b", "c"):
        found = 0
        for s in scored[family]:
            ranking = rule(s)
            top = [s.uids[j] for j in np.argsort(-ranking)[:5] if np.isfinite(ranking[j])]
            found += any(uid in s.targets for uid in top)
        result[family] = found / max(len(scored[family]), 1)
    result["g"] = sum(1 for s in scored["g"] if not np.isfinite(rule(s)).any()) / max(
        len(scored["g"]), 1
    )
    return result


def floor(values: Scores, at: float, keep: Scores | None = None) -> Scores:
    mask = (values >= at) if keep is None else ((values >= at) & keep)
    return np.where(mask, values, -np.inf)


def absolute(at: float) -> Rule:
    return lambda s: floor(s.similarity, at)


def relative(z: float, at: float) -> Rule:
    def rule(s: Scored) -> Scores:
        spread = max(float(s.similarity.std()), 1e-9)
        return floor(s.similarity, at, (s.similarity - s.similarity.mean()) / spread >= z)

    return rule


def hybrid(weight: float, at: float) -> Rule:
    return lambda s: floor(s.similarity + weight * s.bm25 / (1 + s.bm25), at)


def unscaffolded(at: float) -> Rule:
    return lambda s: floor(s.stripped, at)


def strategies() -> list[tuple[str, Rule]]:
    out = [(f"floor {f}", absolute(f)) for f in FLOORS]
    out += [(f"z >= {z} & floor {f}", relative(z, f)) for z in (1.5, 2.0, 2.5) for f in (0.15, 0.2)]
    out += [
        (f"bm25 {w} & floor {f}", hybrid(w, f)) for w in (0.05, 0.1, 0.2) for f in (0.25, 0.3, 0.35)
    ]
    out += [(f"stripped & floor {f}", unscaffolded(f)) for f in FLOORS]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.experiments", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--size", choices=("1k", "10k", "100k"), default="10k")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args(argv)
    corpus = generate(args.size, args.seed)
    rng = random.Random(f"families:{args.seed}")  # the order of bench.runner.run_families
    queries = {
        "a": families.verbatim_queries(corpus, rng, args.queries),
        "b": families.paraphrase_queries(corpus, rng, args.queries),
    }
    families.identifier_queries(corpus, rng, args.queries)
    queries["c"] = families.distractor_queries(corpus, rng, args.queries)
    queries["g"] = families.no_answer_queries(corpus, rng)
    embedder = load_embedder(load_settings())
    print(
        f"{args.size} corpus, {embedder.model_name}: exact cosine per project "
        "(+global); recall@5 and abstention",
        flush=True,
    )
    scored = score_all(corpus, embedder, queries)
    for name, rule in strategies():
        got = evaluate(scored, rule)
        print(f"{name:24s} " + " ".join(f"{k}={v:.2f}" for k, v in got.items()), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
