"""The `kenning` command: the composition root and the one place that starts the front doors."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from pydantic import ValidationError

import kenning_cli.commands  # noqa: F401  (registers every command in the table)
from kenning import __version__
from kenning.core.errors import KenningError
from kenning.core.settings import load_settings
from kenning_cli import logs
from kenning_cli.registry import COMMANDS


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kenning", description="Kenning: memory for AI coding agents."
    )
    parser.add_argument("--version", action="version", version=f"kenning {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, fn, arguments) in COMMANDS.items():
        child = sub.add_parser(name, help=help_text, description=help_text)
        if arguments is not None:
            arguments(child)
        child.set_defaults(handler=fn)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    load_commands()
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        settings = load_settings()
    # only the settings: any other error of a command is not "configuration"
    except ValidationError as exc:
        print(f"kenning {args.command}: invalid configuration: {exc}", file=sys.stderr)
        return 2
    logs.configure(settings)
    try:
        code: int = args.handler(args, settings)
    except KenningError as exc:
        print(f"kenning {args.command}: {exc}", file=sys.stderr)
        return 1
    return code


def load_commands() -> None:
    """Kept for callers: the command modules register themselves when this module is imported."""


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
