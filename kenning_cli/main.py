"""The `kenning` command: the composition root and the one place that starts the front doors."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from types import FrameType

from pydantic import ValidationError

from kenning import __version__
from kenning.errors import KenningError
from kenning.settings import Settings, load_settings
from kenning_cli import logs

Handler = Callable[[argparse.Namespace, Settings], int]
COMMANDS: dict[str, tuple[str, Handler, Callable[[argparse.ArgumentParser], None] | None]] = {}


def command(name: str, help_text: str,
            arguments: Callable[[argparse.ArgumentParser],
                                None] | None = None) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        COMMANDS[name] = (help_text, fn, arguments)
        return fn
    return register


@command("version", "Print the Kenning version.")
def _version(args: argparse.Namespace, settings: Settings) -> int:
    print(f"kenning {__version__}")
    return 0


@command("valkey",
         "Run the embedded Valkey with the search module in the foreground (Ctrl-C stops it).")
def _valkey(args: argparse.Namespace, settings: Settings) -> int:
    from kenning.embedded import EmbeddedValkey

    if settings.valkey_url is not None:
        print("KENNING_VALKEY_URL is set: Kenning uses that server; nothing to start.",
              file=sys.stderr)
        return 2
    with EmbeddedValkey(settings) as server:
        print(f"valkey ready on {settings.valkey_host}:{settings.valkey_port} (data {server.dir})",
              flush=True)
        wait_for_signal(server.alive)
    return 0


def _doctor_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--token",
                        help="an MCP token secret: doctor then makes an authenticated call")
    parser.add_argument("--no-mcp", action="store_true",
                        help="do not check the MCP server (none is running)")


@command("doctor",
         "Check Valkey, the search module, the indexes, the model, the worker and the MCP server; "
                   "non-zero exit on failure.", _doctor_arguments)
def _doctor(args: argparse.Namespace, settings: Settings) -> int:
    from kenning import doctor
    from kenning_cli.probe import base_url, mcp_checks
    from kenning_cli.services import load_model

    where = "external (KENNING_VALKEY_URL)" if settings.valkey_url else \
        f"embedded {settings.valkey_host}:{settings.valkey_port}"
    print(
        f"settings: data dir {settings.data_dir}; valkey {where}; key prefix "
          f"{settings.key_prefix}; mcp {base_url(settings)}/mcp"
    )
    checks = doctor.run(settings, lambda s: load_model(s, strict=False))
    if not args.no_mcp:
        checks += mcp_checks(settings, args.token)
    for check in checks:
        print(f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.detail}")
    return 0 if all(c.ok for c in checks) else 1


def _up_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-mcp", action="store_true", help="do not start the MCP server")
    parser.add_argument("--no-worker", action="store_true",
                        help="do not start the worker (scheduled maintenance)")
    parser.add_argument("--no-web", action="store_true", help="do not start the dashboard")


@command("up", "Run the whole platform in the foreground: embedded Valkey and every service.",
         _up_arguments)
def _up(args: argparse.Namespace, settings: Settings) -> int:
    from kenning_cli import services

    return services.up(settings, mcp=not args.no_mcp, worker=not args.no_worker,
                       web=not args.no_web)


def wait_for_signal(alive: Callable[[], bool]) -> None:
    """Block until SIGINT/SIGTERM, or until ``alive()`` turns false."""
    stop = threading.Event()

    def handle(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, handle) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while not stop.wait(0.5):
            if not alive():
                raise KenningError("a Kenning service stopped unexpectedly")
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kenning",
                                     description="Kenning: memory for AI coding agents.")
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
    """Import the modules that register further commands (tokens, maintenance, backups, bench)."""
    import importlib

    for module in ("kenning_cli.commands",):
        importlib.import_module(module)


if __name__ == "__main__":  # pragma: no cover
    # Run through the imported module, so commands registered by
    # kenning_cli.commands land in its table.
    from kenning_cli.main import main as imported_main

    sys.exit(imported_main())
