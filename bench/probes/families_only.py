"""The retrieval families alone, for a before/after of a recall change:
`python -m bench.probes.families_only [--size 1k] [--queries 100]`.

The runner's import and its families (a, b, h, c, g, f, j) on a private embedded Valkey, without
latency, throughput, MCP or the lifecycle families; prints the quality numbers as JSON.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from bench.corpus import generate
from bench.instrument import Stopwatch, TimedEmbedder
from bench.run import Run, RunConfig, free_port
from bench.runner import import_corpus, run_families
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import load_embedder
from kenning.store import connect, search_module

KEPT = ("recall@1", "recall@5", "mrr", "abstention", "precision", "recall", "twin_leak_rate")


def measure(config: RunConfig, base: Settings) -> dict[str, Any]:
    corpus = generate(config.size, config.seed)
    with tempfile.TemporaryDirectory(prefix="kenning-families-") as tmp:
        settings = base.model_copy(
            update={
                "data_dir": Path(tmp),
                "valkey_port": free_port(),
                "key_prefix": "fam:",
                "valkey_url": None,
            }
        )
        with EmbeddedValkey(settings):
            client = connect(settings)
            watch = Stopwatch()
            engine = Engine.open(settings, client, TimedEmbedder(load_embedder(base), watch))
            run = Run(engine, watch, corpus, config)
            import_corpus(run, client)
            families = run_families(run, lambda _line: None)
            found = search_module.detect(client)
            engine.close()
            client.close()  # type: ignore[no-untyped-call]
    return {
        "engine": str(found),
        **{
            name: {k: round(v, 4) for k, v in numbers.items() if k in KEPT}
            for name, numbers in families.items()
        },
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", default="1k")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    config = RunConfig(size=args.size, seed=args.seed, queries=args.queries, writes=100)
    print(json.dumps(measure(config, Settings(_env_file=None)), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
