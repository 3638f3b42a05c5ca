"""remember p50 / its embedding p50, before and after a change, interleaved in one run (issue 21).

    PYTHONPATH=$PWD .venv/bin/python -m bench.ab_remember --before HEAD~1 [--texts 400] [--batch 20]

Two worker processes, each an engine with the real model on an embedded Valkey of its own (the
search module KENNING_SEARCH_MODULE names, else RediSearch): one runs this tree, the other the tree
of ``--before`` (``git archive``; this file is copied into it). Each first remembers the corpus's
first ``--preload`` texts untimed, then the parent hands both the same batches of new texts,
alternating which goes first (A B, B A, ...) so that the box's load drifts over both alike. Per text
a worker times the embedding alone, then the remember (which embeds again: the model has no cache).
Prints, per side, the p50s, their ratio and the difference, with the load before and after, and the
p50 over texts of (after's remember minus embedding) minus before's, paired per text
(``paired_p50_ms``: negative when after is faster).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent


def worker() -> None:
    """Read batches (JSON lines: {"preload": n} or {"items": [i, ...]}) from stdin,
    answer each with timings."""
    from bench.corpus import generate
    from bench.roundtrips import private_engine
    from kenning.memory.memories import Draft

    items = generate("1k").items
    with private_engine() as (engine, _):
        for line in sys.stdin:
            order = json.loads(line)
            out: dict[str, list[Any]] = {"embed": [], "remember": [], "status": []}
            for i in order.get("items", range(order.get("preload", 0))):
                item = items[i]
                start = time.perf_counter()
                engine.ctx.embedder.embed(item.content)
                middle = time.perf_counter()
                result = engine.memories.remember(
                    Draft(
                        item.content,
                        namespace=item.namespace,
                        project=item.project,
                        tags=item.tags,
                        kind=item.kind,
                    ),
                    actor="bench",
                )
                out["embed"].append((middle - start) * 1000)
                out["remember"].append((time.perf_counter() - middle) * 1000)
                out["status"].append(result.status)
            print(json.dumps(out), flush=True)


def _tree(ref: str, into: Path) -> Path:
    """The files of ``ref`` (git archive) under ``into``, with this script added."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    shutil.copy(Path(__file__), into / "bench" / "ab_remember.py")
    return into


def _start(tree: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.Popen(
        [sys.executable, "-m", "bench.ab_remember", "--worker"],
        cwd=tree,
        env=env,
        text=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
    )


def _ask(proc: subprocess.Popen[str], order: dict[str, Any]) -> dict[str, list[Any]]:
    stdin: IO[str] | None = proc.stdin
    stdout: IO[str] | None = proc.stdout
    assert stdin is not None
    assert stdout is not None
    stdin.write(json.dumps(order) + "\n")
    stdin.flush()
    line = stdout.readline()
    if not line:
        raise RuntimeError(f"a worker ended (exit {proc.wait()})")
    answer: dict[str, list[Any]] = json.loads(line)
    return answer


def _summary(runs: dict[str, list[Any]]) -> dict[str, Any]:
    embed, remember = statistics.median(runs["embed"]), statistics.median(runs["remember"])
    return {
        "texts": len(runs["remember"]),
        "stored": runs["status"].count("stored"),
        "embed_p50_ms": round(embed, 3),
        "remember_p50_ms": round(remember, 3),
        "ratio": round(remember / embed, 3),
        "remember_minus_embed_ms": round(remember - embed, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.ab_remember", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--before", default="HEAD~1", help="the git ref measured against this tree")
    parser.add_argument("--texts", type=int, default=400)
    parser.add_argument("--batch", type=int, default=20)
    parser.add_argument("--preload", type=int, default=500, help="texts remembered untimed first")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker()
        return 0
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        sides = {"before": _start(_tree(args.before, Path(tmp))), "after": _start(ROOT)}
        try:
            for proc in sides.values():
                _ask(proc, {"preload": args.preload})
            runs: dict[str, dict[str, list[Any]]] = {
                name: {"embed": [], "remember": [], "status": []} for name in sides
            }
            todo = list(range(args.preload, args.preload + args.texts))
            for n, start in enumerate(range(0, len(todo), args.batch)):
                names = list(sides) if n % 2 == 0 else list(reversed(sides))
                for name in names:
                    got = _ask(sides[name], {"items": todo[start : start + args.batch]})
                    for field, values in got.items():
                        runs[name][field] += values
        finally:
            for proc in sides.values():
                if proc.stdin is not None:
                    proc.stdin.close()
                proc.wait(timeout=60)
    paired = [
        (a - ae) - (b - be)
        for a, ae, b, be in zip(
            runs["after"]["remember"],
            runs["after"]["embed"],
            runs["before"]["remember"],
            runs["before"]["embed"],
            strict=True,
        )
    ]
    print(
        json.dumps(
            {
                "before_ref": args.before,
                "load_before": [round(x, 2) for x in load],
                "load_after": [round(x, 2) for x in os.getloadavg()],
                **{name: _summary(r) for name, r in runs.items()},
                "paired_p50_ms": round(statistics.median(paired), 3),
            },
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
