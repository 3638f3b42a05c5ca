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
