"""Round trips and Valkey commands per call of the engine's write paths (issue 12).

    PYTHONPATH=$PWD .venv/bin/python -m bench.roundtrips

Starts an embedded Valkey (the search module KENNING_SEARCH_MODULE names, else RediSearch) on a free
port, opens the engine with the real model and counts, for each write path, the round trips (each
packed send on a connection: a pipeline or a script is one) and the commands Valkey ran (INFO
commandstats delta, the INFO itself not counted). Prints one JSON object; docs/architecture.md and
bench/FINDINGS.md quote it.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import valkey
from valkey.connection import Connection

from bench.run import free_port
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import load_embedder
from kenning.store import connect

SENDS = [0]


def _counting(send: Callable[..., Any]) -> Callable[..., Any]:
    def counted(self: Connection, *args: Any, **kwargs: Any) -> Any:
        SENDS[0] += 1
        return send(self, *args, **kwargs)

    return counted


@contextmanager
def counted_sends() -> Iterator[None]:
    """Count every packed send of the valkey client (one per round trip) while inside."""
    original = Connection.send_packed_command
    Connection.send_packed_command = _counting(original)  # type: ignore[method-assign]
    try:
        yield
    finally:
        Connection.send_packed_command = original  # type: ignore[method-assign]


def commands(client: valkey.Valkey) -> int:
    raw: Any = client.info("commandstats")
    return sum(int(v["calls"]) for k, v in raw.items() if k != "cmdstat_info")


def measure(client: valkey.Valkey, fn: Callable[[], Any]) -> dict[str, int]:
    before_cmds = commands(client)
    with counted_sends():
        SENDS[0] = 0
        fn()
        trips = SENDS[0]
    # minus the INFO's own count
    return {"round_trips": trips, "commands": commands(client) - before_cmds - 1}


def run(engine: Engine, client: valkey.Valkey) -> dict[str, dict[str, int]]:
    mem = engine.memories
    out: dict[str, dict[str, int]] = {}
    mem.remember(Draft("Warm-up: the staging cluster runs Postgres 16."), actor="bench")
    out["remember"] = measure(
        client,
        lambda: mem.remember(
            Draft("The build cache lives on the NFS share under /srv/cache."), actor="bench"
        ),
    )
    key = mem.remember(Draft("Deploys go out on Tuesdays after the standup."), actor="bench").key
    out["deprioritise"] = measure(
        client, lambda: engine.lifecycle.deprioritise(key, reason="stale schedule", actor="bench")
    )
    gone = mem.remember(Draft("The old VPN endpoint is vpn1.example.org."), actor="bench").key
    out["forget"] = measure(
        client, lambda: mem.forget(gone, confirm=True, actor="bench", reason="replaced")
    )
    mem.remember(Draft("Always use pickle for the session cache."), actor="bench")
    said = mem.remember(Draft("Never use pickle for the session cache."), actor="bench")
    record = str(said.notes[0].contradiction)
    out["resolve_contradiction"] = measure(
        client,
        lambda: engine.contradictions.resolve(
            record, "keep_b", "pickle was banned after the audit", actor="bench"
        ),
    )
    return out


@contextmanager
def private_engine() -> Iterator[tuple[Engine, valkey.Valkey]]:
    """An engine with the real model on an embedded Valkey of its own (a
    temporary data dir, a free port)."""
    with tempfile.TemporaryDirectory() as data:
        settings = Settings(
            _env_file=None, data_dir=Path(data), valkey_port=free_port(), key_prefix="rt:"
        )
        with EmbeddedValkey(settings):
            client = connect(settings)
            try:
                yield Engine.open(settings, client, load_embedder(settings)), client
            finally:
                client.close()  # type: ignore[no-untyped-call]


def main() -> None:
    with private_engine() as (engine, client):
        print(json.dumps(run(engine, client), indent=1))


if __name__ == "__main__":
    main()
