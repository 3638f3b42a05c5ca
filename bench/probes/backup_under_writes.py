"""A `kenning backup --vectors` of N memories while writer threads rewrite some of them: how many
entries of the file are torn (the text of one version with the vector of another), and what a
dry-run restore straight after a backup of the quiet store plans (docs/reliability.md, "Backups").

    PYTHONPATH=. python -m bench.probes.backup_under_writes --n 20000 --writers 4

An entry is torn when its vector is not the embedding of its own text: a rewritten entry's vector
is compared with the embedding of the text the file holds; an entry still holding its first text
is compared with the vector that text was stored with.
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import socket
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from kenning.core.clock import SystemClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import load_embedder
from kenning.store import connect


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


SYLLABLES = [a + b for a in "bdfgklmnprstvz" for b in ("a", "e", "i", "o", "u", "ar", "en")]


def first(n: int) -> str:
    """A distinct made-up statement per n (near-identical texts would be refused as duplicates)."""
    rng = random.Random(n)
    words = ["".join(rng.choice(SYLLABLES) for _ in range(3)) for _ in range(10)]
    return f"Note {n}: " + " ".join(words)


def moved(n: int, round_: int) -> str:
    return f"Moved in round {round_}: service {n} now runs in zone {(n + round_) % 13}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--writers", type=int, default=4)
    parser.add_argument("--dir", type=Path, default=None, help="data dir parent (temp dir)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        settings = Settings(
            _env_file=None,
            data_dir=Path(tmp),
            valkey_port=free_port(),
            key_prefix="probe:",
            backup_dir=Path(tmp) / "backups",
        )
        with EmbeddedValkey(settings):
            engine = Engine.open(
                settings, connect(settings), load_embedder(settings), SystemClock()
            )
            run(engine, args.n, args.writers)


def run(engine: Engine, n: int, writers: int) -> None:
    start = time.perf_counter()
    drafts = [Draft(first(i), project="fleet") for i in range(n)]
    results = engine.imports.bulk.remember_many(drafts, actor="seed")
    keys = [r.key for r in results if r.status == "stored"]
    n = len(keys)
    seeded = dict(zip(keys, engine.store.vectors(keys), strict=True))
    print(f"seeded {len(keys)} memories in {time.perf_counter() - start:.0f} s")
    stop = threading.Event()
    rewritten: set[str] = set()

    def rewrite(w: int) -> None:
        round_ = 0
        while not stop.is_set():
            round_ += 1
            for i in range(w, n, max(1, n // 200)):  # ~200 memories, rewritten round after round
                if stop.is_set():
                    return
                engine.memories.update(keys[i], moved(i, round_), actor=f"w{w}")
                rewritten.add(keys[i])

    threads = [threading.Thread(target=rewrite, args=(w,)) for w in range(writers)]
    for thread in threads:
        thread.start()
    time.sleep(2)
    start = time.perf_counter()
    made = engine.backups.backup(vectors=True, actor="probe")
    took = time.perf_counter() - start
    during = len(rewritten)
    stop.set()
    for thread in threads:
        thread.join()
    entries = json.loads(Path(made.path).read_text(encoding="utf-8"))["memories"]
    torn = checked = 0
    for entry in entries:
        text = entry["fields"]["content"]
        vector = np.frombuffer(base64.b64decode(entry["vector"]), dtype="<f4")
        expected = (
            engine.ctx.embedder.embed(text) if text.startswith("Moved") else seeded[entry["key"]]
        )
        torn += float(np.max(np.abs(vector - np.asarray(expected)))) > 1e-4
        checked += 1
    rewritten_in_file = sum(e["fields"]["content"].startswith("Moved") for e in entries)
    print(
        f"backup of {len(entries)} memories in {took:.1f} s while {writers} writers rewrote "
        f"{during} memories; {rewritten_in_file} entries hold a rewritten text; "
        f"torn entries: {torn} of {checked}"
    )
    quiet = engine.backups.backup(vectors=True, label="quiet", actor="probe")
    plan = engine.backups.restore(Path(quiet.path), actor="probe")
    print(f"dry-run restore straight after a backup of the quiet store: {plan.memories}")


if __name__ == "__main__":
    main()
