"""The contradiction family: precision and recall of detection on a labelled corpus of pairs.

``bench/data/contradictions.jsonl`` holds statement pairs (older, newer) written in several voices
(terse commit style, chatty Slack style, formal docs, non-native English, typos), each labelled a
contradiction or not, with as many negatives as positives: additions, two subjects sharing a slot,
a value restated, a plan or a question against a fact, different projects, related facts. A third
of the pairs (chosen by a hash of their id) is ``holdout``: the detector was tuned on ``dev`` only.

Two measures: ``pure`` runs the text check (``kenning.truth.detection.conflict``) over every
pair; ``through_engine`` remembers each pair's two statements in a project of its own and counts
the contradictions ``remember`` opened (similarity gate, duplicate check and all), so it differs
between search modules only where the gate does.

Standalone: ``python -m bench.contradictions`` (pure) or ``python -m bench.contradictions
--engine`` (a private embedded Valkey; ``KENNING_SEARCH_MODULE`` picks the module).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kenning.truth.detection import conflict

CORPUS = Path(__file__).resolve().parent / "data" / "contradictions.jsonl"
SPLITS = ("dev", "holdout")


@dataclass(frozen=True)
class Pair:
    """One labelled pair: ``label`` True when ``newer`` contradicts ``older``."""

    id: str
    label: bool
    kind: str
    style: str
    split: str
    older: str
    newer: str


def load(path: Path = CORPUS) -> list[Pair]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return [Pair(**row) for row in rows]


def detected(pair: Pair) -> bool:
    """The pure check's verdict on one pair."""
    return conflict(pair.older, pair.newer) is not None


def summary(pairs: Iterable[Pair], verdict: Callable[[Pair], bool]) -> dict[str, Any]:
    """Precision, recall and the confusion counts, overall and per split, with the misses."""
    rows = [(p, verdict(p)) for p in pairs]
    out: dict[str, Any] = {"all": _scores(rows)}
    for split in SPLITS:
        out[split] = _scores([(p, v) for p, v in rows if p.split == split])
    out["missed"] = [p.id for p, v in rows if p.label and not v]
    out["false_alarms"] = [p.id for p, v in rows if v and not p.label]
    return out


def _scores(rows: list[tuple[Pair, bool]]) -> dict[str, float]:
    tp = sum(1 for p, v in rows if p.label and v)
    fp = sum(1 for p, v in rows if not p.label and v)
    fn = sum(1 for p, v in rows if p.label and not v)
    tn = len(rows) - tp - fp - fn
    return {
        "pairs": float(len(rows)),
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / (tp + fn) if tp + fn else 1.0,
        "tp": float(tp),
        "fp": float(fp),
        "fn": float(fn),
        "tn": float(tn),
    }


def pure(pairs: list[Pair] | None = None) -> dict[str, Any]:
    """The text check over the corpus (no store, no model)."""
    return summary(pairs or load(), detected)


def through_engine(engine: Any, pairs: list[Pair] | None = None) -> dict[str, Any]:
    """Each pair remembered in a project of its own (older first, a day apart on the engine's
    clock when it can advance); a pair counts as detected when the newer remember reported a
    contradiction."""
    from kenning.memory.memories import Draft

    verdicts: dict[str, bool] = {}
    for pair in pairs or load():
        project = f"cx-{pair.id}"
        engine.memories.remember(Draft(pair.older, project=project), actor="bench")
        advance = getattr(engine.ctx.clock, "advance", None)
        if advance is not None:
            advance(60.0)
        result = engine.memories.remember(Draft(pair.newer, project=project), actor="bench")
        verdicts[pair.id] = any(n.kind == "contradiction" for n in result.notes)
    return summary(pairs or load(), lambda p: verdicts[p.id])


def flat(result: dict[str, Any]) -> dict[str, float]:
    """One measure's numbers as the bench page's family table reads them (no lists)."""
    out: dict[str, float] = {}
    for split in ("all", *SPLITS):
        prefix = "" if split == "all" else f"{split}_"
        for name in ("precision", "recall", "pairs"):
            out[prefix + name] = result[split][name]
    return out


def family(engine: Any) -> dict[str, Any]:
    """``kenning bench``'s family (j): the pure check and the same pairs through remember."""
    pairs = load()
    return {"pure": flat(pure(pairs)), "engine": flat(through_engine(engine, pairs))}


def _print(name: str, result: dict[str, Any], pairs: list[Pair]) -> None:
    for split in ("all", *SPLITS):
        s = result[split]
        print(
            f"{name} {split:8s} pairs {s['pairs']:.0f}  precision {s['precision']:.3f}  "
            f"recall {s['recall']:.3f}  (tp {s['tp']:.0f} fp {s['fp']:.0f} "
            f"fn {s['fn']:.0f} tn {s['tn']:.0f})"
        )
    by_id = {p.id: p for p in pairs}
    for label, ids in (("missed", result["missed"]), ("false alarm", result["false_alarms"])):
        for pid in ids:
            p = by_id[pid]
            print(f"  {label} {pid} [{p.split}/{p.kind}/{p.style}] {p.older!r} -> {p.newer!r}")


def _engine_run(pairs: list[Pair]) -> dict[str, Any]:
    from bench.run import free_port
    from kenning.core.clock import ManualClock
    from kenning.core.settings import Settings
    from kenning.engine import Engine
    from kenning.ops.embedded import EmbeddedValkey
    from kenning.runtime.embedding import load_embedder
    from kenning.store import connect, search_module

    with tempfile.TemporaryDirectory(prefix="kenning-bench-cx-") as tmp:
        settings = Settings(
            data_dir=Path(tmp), valkey_port=free_port(), key_prefix="benchcx:", valkey_url=None
        )
        with EmbeddedValkey(settings):
            client = connect(settings)
            module = search_module.detect(client)
            print(f"search module: {module}")
            engine = Engine.open(settings, client, load_embedder(settings), clock=ManualClock())
            result = through_engine(engine, pairs)
            client.close()  # type: ignore[no-untyped-call]
            return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.contradictions")
    parser.add_argument("--engine", action="store_true", help="also through remember (Valkey)")
    parser.add_argument("--quiet", action="store_true", help="no list of misses")
    args = parser.parse_args(argv)
    pairs = load()
    result = pure(pairs)
    _print(
        "pure", result if not args.quiet else {**result, "missed": [], "false_alarms": []}, pairs
    )
    if args.engine:
        engine_result = _engine_run(pairs)
        if args.quiet:
            engine_result = {**engine_result, "missed": [], "false_alarms": []}
        _print("engine", engine_result, pairs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
