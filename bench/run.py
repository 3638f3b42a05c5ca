"""What every measure of a run plugs into: the run's configuration and its live state (the engine,
the stopwatch, the corpus and the uid <-> key maps). The runner builds one; measures take it.
"""

from __future__ import annotations

import socket
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.corpus import Corpus
from bench.families import Query, Write
from bench.instrument import Stopwatch, timed
from kenning.core.models import RememberResult
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest
from kenning.ops.embedded import EmbeddedValkey
from kenning.store import connect

ACTOR = "bench"
TOP_K = 10


@dataclass(frozen=True)
class RunConfig:
    size: str = "10k"
    seed: int = 7
    queries: int = 200  # per retrieval family
    writes: int = 200  # near-duplicate family
    throughput_requests: int = 300
    mcp_calls: int = 150
    clients: tuple[int, ...] = (1, 8)
    # CONFIG SET on the private server (experiments)
    valkey_config: tuple[tuple[str, str], ...] = ()


@dataclass
class Run:
    """The live state of a run: the engine, the stopwatch and the uid <-> key maps."""

    engine: Engine
    watch: Stopwatch
    corpus: Corpus
    config: RunConfig
    key_of: dict[str, str] = field(default_factory=dict)
    uid_of: dict[str, str] = field(default_factory=dict)
    recall_phases: list[dict[str, float]] = field(default_factory=list)
    remember_phases: list[dict[str, float]] = field(default_factory=list)
    queries: dict[str, list[Query]] = field(default_factory=dict)

    def recall(self, query: Query, *, filtered: bool = True, keep: bool = True) -> list[str]:
        """Run one recall; the uids it returned (a key the corpus does not know maps to itself)."""
        request = RecallRequest(
            query.text,
            projects=[query.project] if filtered and query.project else None,
            top_k=TOP_K,
            actor=ACTOR,
        )
        result, phases = timed(self.engine.recaller.recall, self.watch, request)
        if keep:
            self.recall_phases.append(phases)
        return [self.uid_of.get(h.memory.key, h.memory.key) for h in result.hits]

    def remember(self, write: Write) -> RememberResult:
        draft = Draft(write.text, namespace=write.namespace, project=write.project)
        result, phases = timed(self.engine.memories.remember, self.watch, draft, actor=ACTOR)
        self.remember_phases.append(phases)
        written: RememberResult = result
        return written


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def private_store(settings: Settings) -> Iterator[tuple[Settings, Any]]:
    """A private Valkey with the configured search module (AOF off: the load measures the
    index, not the disk) and a client to it."""
    with tempfile.TemporaryDirectory(prefix="kenning-bench-") as tmp:
        private = settings.model_copy(
            update={
                "data_dir": Path(tmp),
                "valkey_port": free_port(),
                "key_prefix": "bench:",
                "valkey_url": None,
            }
        )
        with EmbeddedValkey(private):
            client = connect(private)
            client.config_set("appendonly", "no")
            try:
                yield private, client
            finally:
                client.close()  # type: ignore[no-untyped-call]
