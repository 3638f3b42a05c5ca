"""Where a memory's Valkey bytes go (issue 38): the bench corpus imported through the bulk path into
a private Valkey, then ``INFO memory`` before and after, ``MEMORY USAGE`` per kind of key and the
index's parts as ``FT.INFO`` reports them (RediSearch names them; valkey-search reports none).

    PYTHONPATH=$PWD .venv/bin/python -m bench.footprint --size 10k

The vectors are cached as ``bench.shapes`` caches them, so a second run embeds nothing. The total
is the quantity ``kenning bench`` reports as bytes per memory (its import also interleaves an
embedding-only pass, which writes nothing); the parts say which of them a change moved.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench import system
from bench.corpus import generate
from bench.run import free_port
from bench.shapes import CachedEmbedder
from kenning.core.settings import load_settings
from kenning.engine import Engine
from kenning.memory.bulk import Bulk
from kenning.memory.memories import Draft
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import load_embedder
from kenning.store import connect, search_module

PREFIX = "bench:"
SAMPLE = 300  # keys of each kind whose MEMORY USAGE is read
INDEX_PARTS = (  # FT.INFO's byte counters (RediSearch; in MB)
    "vector_index_sz_mb",
    "inverted_sz_mb",
    "offset_vectors_sz_mb",
    "doc_table_size_mb",
    "sortable_values_size_mb",
    "key_table_size_mb",
    "text_overhead_sz_mb",
    "tag_overhead_sz_mb",
)


def measure(size: str, seed: int) -> dict[str, Any]:
    corpus = generate(size, seed)
    base = load_settings()
    inner = load_embedder(base)
    cache = Path(tempfile.gettempdir()) / f"kenning-shapes-{size}-{seed}-{inner.model_name}.npy"
    embedder = CachedEmbedder(inner, cache, [i.content for i in corpus.items])
    drafts = [
        Draft(i.content, namespace=i.namespace, project=i.project, tags=i.tags, kind=i.kind)
        for i in corpus.items
    ]
    with tempfile.TemporaryDirectory(prefix="kenning-footprint-") as tmp:
        settings = base.model_copy(
            update={
                "data_dir": Path(tmp),
                "valkey_port": free_port(),
                "key_prefix": PREFIX,
                "valkey_url": None,
            }
        )
        with EmbeddedValkey(settings):
            client = connect(settings)
            engine = Engine.open(settings, client, embedder)
            found = search_module.detect(client)
            before = system.used_memory(client)
            results = Bulk(engine.ctx, engine.memories).remember_many(drafts, actor="bench")
            stored = sum(1 for r in results if r.status == "stored")
            delta = system.used_memory(client) - before
            out = {
                "size": size,
                "engine": f"{found.name} {found.version}" if found else "unknown",
                "stored": stored,
                "bytes_per_memory": delta / max(stored, 1),
                "keys": key_classes(client, stored),
                "index": index_parts(client, engine.ctx.index, stored),
            }
            engine.close()
            return out


def key_classes(client: Any, stored: int) -> dict[str, dict[str, float]]:
    """Per kind of key (its name up to the second colon): how many, and their sampled
    ``MEMORY USAGE`` spread over the stored memories."""
    groups: dict[str, list[bytes]] = defaultdict(list)
    for key in client.scan_iter(f"{PREFIX}*", count=1000):
        groups[":".join(key.decode().split(":")[:2])].append(key)
    out: dict[str, dict[str, float]] = {}
    for name, keys in sorted(groups.items()):
        sample = keys[:SAMPLE]
        each = sum(int(client.memory_usage(k, samples=0) or 0) for k in sample) / len(sample)
        out[name] = {
            "keys": len(keys),
            "bytes_each": each,
            "per_memory": each * len(keys) / max(stored, 1),
        }
    return out


def index_parts(client: Any, index: str, stored: int) -> dict[str, float]:
    """The index's byte counters per memory, where the engine reports them."""
    raw = client.execute_command("FT.INFO", index)
    info = {_text(k): v for k, v in zip(raw[::2], raw[1::2], strict=True)}
    return {
        name.removesuffix("_mb"): float(_text(info[name])) * 1024 * 1024 / max(stored, 1)
        for name in INDEX_PARTS
        if name in info
    }


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.footprint", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--size", default="10k")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    out = measure(args.size, args.seed)
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
