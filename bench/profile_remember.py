"""Where a remember's time goes beyond its embedding (issue 21): cProfile over new texts.

    PYTHONPATH=$PWD .venv/bin/python -m bench.profile_remember [--preload 500] [--texts 300]

An engine with the real model on an embedded Valkey of its own (the search module
KENNING_SEARCH_MODULE names, else RediSearch) remembers the 1k corpus's first ``--preload`` texts
untimed, then the next ``--texts`` under cProfile; prints the top functions by cumulative and by own
time, and the mean ms per remember of each stage.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats

from bench.corpus import generate
from bench.roundtrips import private_engine
from kenning.memory.memories import Draft

STAGES = (
    "remember",
    "embed",
    "claim_and_search",
    "write_new",
    "on_remember",
    "_validated",
    "hidden_notes",
    "parse_active",
    "finish",
    "commit",
    "decode",
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.profile_remember", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--preload", type=int, default=500)
    parser.add_argument("--texts", type=int, default=300)
    parser.add_argument("--top", type=int, default=35)
    args = parser.parse_args(argv)
    items = generate("1k").items
    drafts = [
        Draft(i.content, namespace=i.namespace, project=i.project, tags=i.tags, kind=i.kind)
        for i in items
    ]
    with private_engine() as (engine, _):
        for draft in drafts[: args.preload]:
            engine.memories.remember(draft, actor="bench")
        profile = cProfile.Profile()
        profile.enable()
        for draft in drafts[args.preload : args.preload + args.texts]:
            engine.memories.remember(draft, actor="bench")
        profile.disable()
    for order in ("cumulative", "tottime"):
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats(order).print_stats(args.top)
        print(out.getvalue())
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    for name in STAGES:
        total = sum(v[3] for (_, _, fn), v in stats.items() if fn == name)
        print(f"{name:>18}: {total * 1000 / args.texts:.3f} ms per remember")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
