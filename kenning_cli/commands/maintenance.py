"""Store administration commands."""

from __future__ import annotations

import argparse

from kenning.core.settings import Settings
from kenning_cli.registry import command


@command("migrate", "Create or migrate the search indexes now (services also do this at start-up).")
def _migrate(args: argparse.Namespace, settings: Settings) -> int:
    from kenning_cli.services import open_engine

    engine = open_engine(settings)
    for namespace, name in engine.ctx.indexes.items():
        print(f"{namespace}: {name}")
    return 0


def _compact_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--if-due",
        action="store_true",
        help="only when the file has doubled since its last rewrite (what maintenance does)",
    )


@command(
    "compact",
    "Rewrite Valkey's append-only file now, writes paused meanwhile (Kenning's Valkey never "
    "rewrites it on its own: docs/operations.md).",
    _compact_arguments,
)
def _compact(args: argparse.Namespace, settings: Settings) -> int:
    from kenning.store import Store, connect

    store = Store(connect(settings), settings.key_prefix)  # the store alone: no model to load
    done = store.compact_aof(force=not args.if_due)
    if done is None:
        state = store.aof_state()
        print(
            f"nothing rewritten: {state.idle()} ({state.size:,} bytes, "
            f"{state.base:,} after the last rewrite)"
        )
        return 0
    print(
        f"rewrote the append-only file: {done.before:,} -> {done.after:,} bytes; writes waited "
        f"{done.paused_seconds:.1f} s"
    )
    return 0
