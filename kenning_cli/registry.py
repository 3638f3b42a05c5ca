"""The command table: each module of ``kenning_cli.commands`` registers its commands here."""

from __future__ import annotations

import argparse
from collections.abc import Callable

from kenning.core.settings import Settings

Handler = Callable[[argparse.Namespace, Settings], int]
COMMANDS: dict[str, tuple[str, Handler, Callable[[argparse.ArgumentParser], None] | None]] = {}


def command(
    name: str, help_text: str, arguments: Callable[[argparse.ArgumentParser], None] | None = None
) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        COMMANDS[name] = (help_text, fn, arguments)
        return fn

    return register
