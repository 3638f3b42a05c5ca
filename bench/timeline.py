"""Memory over time (issue 14): `python -m bench.timeline [--seed 7] [--out FILE]`.

Imports the generated history of ``bench.history`` with each turn at its own time (a manual clock,
``event_date`` = the turn's date), then asks its questions a day after the last turn and a year
later, with the recency policy of the engine (``--recency new``) and the one before issue 14 (floor
0.3, 0.05 per 30 days). Reports recall@1/5/10 and MRR per question kind, the cost of a year of
ageing, the dated questions with the year dropped (how they were read before), value-change
detection precision and recall (open ``value`` contradictions against the history's changes) and the
suppression notes. Prints one markdown table per part (pasted into
docs/benchmarks.md) and writes the JSON.
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path
from typing import Any

from bench import metrics
from bench.history import PROJECT, History, generate
from bench.run import free_port
from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.experience import Approach
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import load_embedder
from kenning.store import connect

DAY = 86_400.0
TOP_K = 10
OLD_RECENCY = {"recency_floor": 0.3, "recency_step": 0.05}
_DATE = re.compile(r",? (\d{4})\?$")


def ask(
    engine: Engine, history: History, key_of: dict[str, str], *, drop_year: bool = False
) -> dict[str, Any]:
    """recall@1/5/10 and MRR per question kind."""
    uid_of = {v: k for k, v in key_of.items()}
    ranks: dict[str, list[int | None]] = {}
    firsts: list[str] = []
    for q in history.questions:
        text = _DATE.sub("?", q.text) if drop_year and q.kind == "dated" else q.text
        if drop_year and q.kind != "dated":
            continue
        hits = engine.recaller.recall(
            RecallRequest(text, projects=[PROJECT], top_k=TOP_K, actor="bench")
        ).hits
        returned = [uid_of.get(h.memory.key, h.memory.key) for h in hits]
        ranks.setdefault(q.kind, []).append(metrics.first_rank(returned, [q.target]))
        firsts += returned[:1]
    out: dict[str, Any] = {kind: _summary(r) for kind, r in sorted(ranks.items())}
    out["all"] = _summary([r for rs in ranks.values() for r in rs])
    # small talk (greetings, bare questions, acknowledgements, sign-offs) at top-1 vs among turns
    out["small_talk"] = {
        "top1": sum(_chatter(u) for u in firsts) / max(len(firsts), 1),
        "turns": sum(_chatter(t.uid) for t in history.turns) / len(history.turns),
    }
    return out


def _chatter(uid: str) -> bool:
    return uid.split("-")[1:2] in (["hello"], ["ask"], ["ack"], ["bye"])


def _summary(ranks: list[int | None]) -> dict[str, float]:
    return {
        "n": len(ranks),
        "r@1": metrics.recall_at(ranks, 1),
        "r@5": metrics.recall_at(ranks, 5),
        "r@10": metrics.recall_at(ranks, 10),
        "mrr": metrics.mrr(ranks),
    }


def detection(engine: Engine, history: History, key_of: dict[str, str]) -> dict[str, Any]:
    """Open value contradictions against the changes of the history."""
    uid_of = {v: k for k, v in key_of.items()}
    records, _ = engine.memories.contradictions.listing(status="all", limit=200)
    value = [r for r in records if r.detector == "value"]
    pairs = [(uid_of.get(r.a, r.a), uid_of.get(r.b, r.b)) for r in value]
    right = [
        (a, b)
        for a, b in pairs
        if a in history.slot_of and history.slot_of.get(a) == history.slot_of.get(b)
    ]
    caught = {b for _, b in right} & set(history.changes)
    return {
        "value_records": len(value),
        "correct": len(right),
        "changes": len(history.changes),
        "changes_caught": len(caught),
        "precision": len(right) / len(value) if value else 0.0,
        "recall": len(caught) / len(history.changes) if history.changes else 0.0,
        "polarity_records": len([r for r in records if r.detector != "value"]),
    }


def suppression_notes(engine: Engine, clock: ManualClock) -> dict[str, Any]:
    """An abandonment that auto-suppresses a name, then a new memory and a recall naming it."""
    engine.experience.log_abandoned(
        Approach(name="Renovate", type="tool", reason="too many PRs at once"),
        effort=4,
        project=PROJECT,
        actor="bench",
    )
    clock.advance(DAY)
    stored = engine.memories.remember(
        Draft("Renovate now only opens one grouped PR per week for billing.", project=PROJECT),
        actor="bench",
    )
    found = engine.recaller.recall(
        RecallRequest(
            "how does Renovate group dependency updates?", projects=[PROJECT], actor="bench"
        )
    )
    return {
        "remember_notes": [n.public() for n in stored.notes],
        "recall_suppressed": dict(found.suppressed),
        "recall_results": len(found.hits),
    }


def run(seed: int, base: Settings) -> dict[str, Any]:
    history = generate(seed)
    embedder = load_embedder(base)  # the model cache of the configured data dir (exported once)
    with tempfile.TemporaryDirectory(prefix="kenning-timeline-") as tmp:
        settings = base.model_copy(
            update={
                "data_dir": Path(tmp),
                "valkey_port": free_port(),
                "key_prefix": "tl:",
                "valkey_url": None,
            }
        )
        with EmbeddedValkey(settings) as _server:
            client = connect(settings)
            clock = ManualClock(history.turns[0].at)
            engine = Engine.open(settings, client, embedder, clock=clock)
            old = Engine.open(
                settings.model_copy(update=OLD_RECENCY), client, embedder, clock=clock
            )
            key_of: dict[str, str] = {}
            refused = 0
            for turn in history.turns:
                clock.value = turn.at
                result = engine.memories.remember(
                    Draft(turn.text, project=PROJECT, namespace="episodic", event_date=turn.at),
                    actor="bench",
                )
                refused += result.status == "duplicate"
                key_of[turn.uid] = result.key
            out: dict[str, Any] = {
                "seed": seed,
                "turns": len(history.turns),
                "refused_as_duplicate": refused,
                "questions": len(history.questions),
                "detection": detection(engine, history, key_of),
            }
            for label, offset in (("day_after", DAY), ("year_after", 366 * DAY)):
                clock.value = history.last + offset
                out[label] = {
                    "new": ask(engine, history, key_of),
                    "old_recency": ask(old, history, key_of),
                }
            clock.value = history.last + DAY
            out["dated_without_year"] = ask(engine, history, key_of, drop_year=True)
            out["suppression"] = suppression_notes(engine, clock)
            client.close()  # type: ignore[no-untyped-call]
    return out


def table(out: dict[str, Any]) -> str:
    rows = [
        "| asked | recency | kind | n | r@1 | r@5 | r@10 | MRR |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label in ("day_after", "year_after"):
        for policy in ("new", "old_recency"):
            for kind, s in out[label][policy].items():
                if kind == "small_talk":
                    rows.append(
                        f"| {label} | {policy} | small talk at top-1 / of turns | "
                        f"{s['top1']:.3f} / {s['turns']:.3f} | | | | |"
                    )
                    continue
                rows.append(
                    f"| {label} | {policy} | {kind} | {s['n']} | {s['r@1']:.2f} | {s['r@5']:.2f} | "
                    f"{s['r@10']:.2f} | {s['mrr']:.2f} |"
                )
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument(
        "--data-dir", type=Path, default=None, help="where the exported model is cached"
    )
    args = parser.parse_args()
    base = Settings(_env_file=None, **({"data_dir": args.data_dir} if args.data_dir else {}))
    out = run(args.seed, base)
    print(table(out))
    print(
        json.dumps({k: v for k, v in out.items() if k not in ("day_after", "year_after")}, indent=2)
    )
    if args.out:
        args.out.write_text(json.dumps(out, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
