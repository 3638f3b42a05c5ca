"""No confident answer, measured on questions nobody tuned on: `python -m bench.abstention`.

``bench/data/abstention.jsonl`` (our own, written for this measure in several voices -- formal,
terse, chatty, an agent's aside, imperative) holds a project's memories and questions about it:
answerable ones (each with the memory that answers it) and unanswerable ones of three kinds
(``near_miss``: the same kind of question about something never stored; ``never_said``: in the
domain, never said; ``off_topic``). Each kind is split in two halves, ``tune`` and ``holdout``;
the verdict's thresholds were set on ``tune`` only, and the page reports both.

Beside it, the same measure on the 1k bench corpus (``--corpus``): its paraphrase family (b),
answerable and written to avoid the memory's words, and its no-answer family (g).

Each question is one recall (project filter, top_k 5): abstained = no hits, or ``confident``
false; answered = the target among the hits. ``--dump FILE`` writes every question's signals
(best similarity, the lead over its neighbourhood, coverage of its key terms) for study.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import corpus as bench_corpus
from bench import families
from bench.run import free_port
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.bulk import Bulk
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest, RecallResult
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import load_embedder
from kenning.store import connect, search_module

DATA = Path(__file__).resolve().parent / "data" / "abstention.jsonl"
PROJECT = "harbor"
TOP_K = 5


@dataclass(frozen=True)
class Question:
    text: str
    project: str
    answer: str | None  # the uid of the memory that answers it; None: nothing does
    kind: str  # answerable | near_miss | never_said | off_topic | paraphrase | no_answer
    split: str  # tune | holdout | bench


def load(path: Path = DATA) -> tuple[dict[str, str], list[Question]]:
    memories: dict[str, str] = {}
    questions: list[Question] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if row["type"] == "memory":
            memories[row["id"]] = row["text"]
        else:
            questions.append(
                Question(row["text"], PROJECT, row["answer"], row["kind"], row["split"])
            )
    return memories, questions


@contextmanager
def engine(base: Settings) -> Iterator[tuple[Engine, str]]:
    embedder = load_embedder(base)
    with tempfile.TemporaryDirectory(prefix="kenning-abstain-") as tmp:
        settings = base.model_copy(
            update={
                "data_dir": Path(tmp),
                "valkey_port": free_port(),
                "key_prefix": "ab:",
                "valkey_url": None,
            }
        )
        with EmbeddedValkey(settings):
            client = connect(settings)
            found = search_module.detect(client)
            built = Engine.open(settings, client, embedder)
            try:
                yield built, str(found) if found is not None else "none"
            finally:
                built.close()
                client.close()  # type: ignore[no-untyped-call]


def store_own(built: Engine, memories: dict[str, str]) -> dict[str, str]:
    """Remember the data file's memories; their keys by uid."""
    return {
        uid: built.memories.remember(
            Draft(text, project=PROJECT), actor="bench", allow_duplicate=True
        ).key
        for uid, text in memories.items()
    }


def store_corpus(built: Engine, seed: int) -> tuple[dict[str, str], list[Question]]:
    """The 1k bench corpus and its (b) paraphrase and (g) no-answer questions."""
    corpus = bench_corpus.generate("1k", seed)
    drafts = [
        Draft(i.content, namespace=i.namespace, project=i.project, tags=i.tags, kind=i.kind)
        for i in corpus.items
    ]
    results = Bulk(built.ctx, built.memories).remember_many(drafts, actor="bench")
    keys = {i.uid: r.key for i, r in zip(corpus.items, results, strict=True)}
    rng = random.Random(f"families:{seed}")
    families.verbatim_queries(corpus, rng, 100)  # the runner's draw order, so the same questions
    asked = [
        Question(q.text, q.project or "", q.targets[0], "paraphrase", "bench")
        for q in families.paraphrase_queries(corpus, rng, 100)
    ]
    asked += [
        Question(q.text, q.project or "", None, "no_answer", "bench")
        for q in families.no_answer_queries(corpus, rng)
    ]
    return keys, asked


def ask(built: Engine, question: Question, keys: dict[str, str]) -> dict[str, Any]:
    found = built.recaller.recall(
        RecallRequest(question.text, projects=[question.project], top_k=TOP_K, actor="bench")
    )
    target = keys.get(question.answer) if question.answer else None
    shown = [h.memory.key for h in (found.hits or found.weak)]
    return {
        "text": question.text,
        "project": question.project,
        "kind": question.kind,
        "split": question.split,
        "answerable": question.answer is not None,
        "abstained": abstained(found),
        "answered": target is not None and target in {h.memory.key for h in found.hits},
        "target_near": target is not None and target in shown,
        **signals(found),
    }


def abstained(found: RecallResult) -> bool:
    return not found.hits or (found.confidence is not None and not found.confidence.confident)


def signals(found: RecallResult) -> dict[str, Any]:
    verdict = found.confidence
    if verdict is None:
        return {}
    return {
        "reason": verdict.reason,
        "best": round(verdict.best, 4),
        "typical": None if verdict.typical is None else round(verdict.typical, 4),
        "coverage": getattr(verdict, "coverage", None),  # None before the signal existed
    }


def summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split in sorted({r["split"] for r in rows}):
        mine = [r for r in rows if r["split"] == split]
        yes = [r for r in mine if r["answerable"]]
        no = [r for r in mine if not r["answerable"]]
        part: dict[str, Any] = {"answerable": len(yes), "unanswerable": len(no)}
        if no:
            part["unanswerable_abstained"] = _share(r["abstained"] for r in no)
            for kind in sorted({r["kind"] for r in no}):
                part[f"{kind}_abstained"] = _share(r["abstained"] for r in no if r["kind"] == kind)
        if yes:
            part["answerable_abstained"] = _share(r["abstained"] for r in yes)
            part["answerable_answered@5"] = _share(r["answered"] for r in yes)
            part["answerable_target_near@5"] = _share(r["target_near"] for r in yes)
        out[split] = part
    return out


def _share(flags: Any) -> float:
    values = list(flags)
    return round(sum(values) / len(values), 4) if values else 0.0


def run(base: Settings, seed: int, with_corpus: bool) -> tuple[dict[str, Any], list[Any]]:
    memories, questions = load()
    with engine(base) as (built, module):
        keys = store_own(built, memories)
        asked = list(questions)
        if with_corpus:
            more, extra = store_corpus(built, seed)
            keys |= more
            asked += extra
        rows = [ask(built, q, keys) for q in asked]
    return {"engine": module, "seed": seed, **summary(rows)}, rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--corpus", action="store_true", help="also the 1k corpus's b and g")
    parser.add_argument("--dump", type=Path, default=None, help="every question's signals")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    out, rows = run(Settings(_env_file=None), args.seed, args.corpus)
    print(json.dumps(out, indent=2))
    if args.dump:
        args.dump.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    if args.out:
        args.out.write_text(json.dumps(out, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
