"""The basic commands: version, valkey (the embedded server alone), doctor and up."""

from __future__ import annotations

import argparse
import sys

from kenning import __version__
from kenning.core.settings import Settings
from kenning_cli.registry import command
from kenning_cli.signals import wait_for_signal


@command("version", "Print the Kenning version.")
def _version(args: argparse.Namespace, settings: Settings) -> int:
    print(f"kenning {__version__}")
    return 0


@command(
    "valkey", "Run the embedded Valkey with the search module in the foreground (Ctrl-C stops it)."
)
def _valkey(args: argparse.Namespace, settings: Settings) -> int:
    from kenning.ops.embedded import EmbeddedValkey

    if settings.valkey_url is not None:
        print(
            "KENNING_VALKEY_URL is set: Kenning uses that server; nothing to start.",
            file=sys.stderr,
        )
        return 2
    with EmbeddedValkey(settings) as server:
        print(
            f"valkey ready on {settings.valkey_host}:{settings.valkey_port} (data {server.dir})",
            flush=True,
        )
        wait_for_signal(server.alive)
    return 0


def _doctor_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--token", help="an MCP token secret: doctor then makes an authenticated call"
    )
    parser.add_argument(
        "--no-mcp", action="store_true", help="do not check the MCP server (none is running)"
    )
    parser.add_argument(
        "--no-web", action="store_true", help="do not check the dashboard (none is running)"
    )


@command(
    "doctor",
    "Check the settings file, Valkey, the search module, the indexes, the model, the worker, the "
    "MCP server and the dashboard; non-zero exit on failure.",
    _doctor_arguments,
)
def _doctor(args: argparse.Namespace, settings: Settings) -> int:
    from kenning.core.settings import current_settings_file
    from kenning.ops import doctor
    from kenning_cli.probe import base_url, mcp_checks, web_check
    from kenning_cli.services import load_model

    path, why = current_settings_file()
    shown = f"{path}{'' if path is None or path.is_file() else ' (missing)'}, {why}"
    print(f"settings file: {shown if path is not None else why}")
    where = (
        "cluster (KENNING_VALKEY_CLUSTER)"
        if settings.valkey_cluster
        else "external (KENNING_VALKEY_URL)"
        if settings.valkey_url
        else f"embedded {settings.valkey_host}:{settings.valkey_port}"
    )
    print(
        f"settings: data dir {settings.data_dir}; valkey {where}; key prefix "
        f"{settings.key_prefix}; mcp {base_url(settings)}/mcp"
    )
    checks = doctor.run(settings, lambda s: load_model(s, strict=False))
    if not args.no_mcp:
        checks += mcp_checks(settings, args.token)
    if not args.no_web:
        checks.append(web_check(settings))
    for check in checks:
        print(f"{'ok  ' if check.ok else 'FAIL'} {check.name}: {check.detail}")
    return 0 if all(c.ok for c in checks) else 1


def _up_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-mcp", action="store_true", help="do not start the MCP server")
    parser.add_argument(
        "--no-worker", action="store_true", help="do not start the worker (scheduled maintenance)"
    )
    parser.add_argument("--no-web", action="store_true", help="do not start the dashboard")


@command(
    "up",
    "Run the whole platform in the foreground: embedded Valkey and every service.",
    _up_arguments,
)
def _up(args: argparse.Namespace, settings: Settings) -> int:
    from kenning_cli import services

    return services.up(
        settings, mcp=not args.no_mcp, worker=not args.no_worker, web=not args.no_web
    )
