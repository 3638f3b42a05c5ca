"""`kenning connect CLIENT`: the exact configuration for this server in a client (docs/clients.md).

Prints the client's configuration (and its own command, where it has one); ``--write`` merges it
into the client's config file (backed up first; only the ``kenning`` entry changes; idempotent).
Auth is a bearer read from ``$KENNING_TOKEN`` by default, a new token with ``--token-scope`` (its
secret shown once and written only where it is used), or ``--oauth`` (the client logs in). For
Claude Code, ``--plugin DIR`` writes the plugin with its SessionStart briefing hook and, with
``--capture``, the PreCompact/SessionEnd capture of decisions and lessons.
"""

from __future__ import annotations

import argparse
import getpass
import secrets
from pathlib import Path

from kenning.core.errors import InvalidInput
from kenning.core.settings import Settings
from kenning_cli.connect import clients, plugin
from kenning_cli.probe import base_url
from kenning_cli.registry import command


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("client", choices=clients.CLIENTS)
    parser.add_argument("--url", help="the MCP endpoint (default: KENNING_MCP_PUBLIC_URL or local)")
    auth = parser.add_mutually_exclusive_group()
    auth.add_argument(
        "--token-scope",
        choices=("read", "write"),
        help="create a new token of this scope for the client (shown once)",
    )
    auth.add_argument("--oauth", action="store_true", help="the client logs in (OAuth)")
    parser.add_argument("--write", action="store_true", help="merge into the client's config file")
    parser.add_argument("--config", type=Path, help="the client's config file (default: its own)")
    parser.add_argument(
        "--plugin", type=Path, help="claude-code: write the plugin into this folder"
    )
    parser.add_argument(
        "--capture",
        action="store_true",
        help="plugin: store decisions and lessons at PreCompact and SessionEnd (off by default)",
    )
    parser.add_argument(
        "--budget", type=int, default=1500, help="plugin: SessionStart context budget in tokens"
    )
    parser.add_argument("--project", help="plugin: the project (default: from the working folder)")


@command(
    "connect",
    "Configure a client (claude-code, claude-desktop, cursor, vscode, codex) for this server; "
    "--plugin DIR writes the Claude Code plugin.",
    _arguments,
)
def _connect(args: argparse.Namespace, settings: Settings) -> int:
    url = args.url or settings.mcp_public_url or f"{base_url(settings)}/mcp"
    if args.plugin is not None and args.client != "claude-code":
        raise InvalidInput("--plugin is for claude-code", hint="drop --plugin for this client")
    if not 200 <= args.budget <= 20_000:
        raise InvalidInput("--budget must be 200-20000 tokens")
    secret = _new_token(settings, args) if args.token_scope else None
    target = clients.Target(args.client, url, token=secret, oauth=args.oauth)
    if args.plugin is not None:
        return _plugin(args, url, secret)
    if args.write:
        path = args.config or clients.default_path(args.client)
        changed = clients.merge(target, path)
        print(f"{path}: " + ("unchanged (already configured)" if changed is None else "updated"))
        if changed is not None and changed != path:
            print(f"the previous file is kept as {changed}")
        if secret:
            print(f"the new token is stored in {path} (readable by you only)")
    else:
        print(clients.snippet(target))
        if line := clients.command_line(target):
            print(f"\nor run:\n  {line}")
    _auth_note(target)
    return 0


def _plugin(args: argparse.Namespace, url: str, secret: str | None) -> int:
    spec = plugin.Plugin(
        url, oauth=args.oauth, capture=args.capture, budget_tokens=args.budget, project=args.project
    )
    for path in plugin.write(spec, args.plugin):
        print(f"wrote {path}")
    print(f"\nload it: claude --plugin-dir {args.plugin}   (or add it to a marketplace)")
    print(f"skills: kenning skills sync {args.plugin / 'skills'}")
    if secret:
        print("\nthe plugin reads the token from KENNING_TOKEN; set it once:")
        print(f"  export KENNING_TOKEN={secret}")
    elif not args.oauth:
        print(
            "\nthe plugin reads the token from KENNING_TOKEN (kenning token create --scope write)"
        )
    return 0


def _new_token(settings: Settings, args: argparse.Namespace) -> str:
    from kenning_cli.commands.tokens import _tokens

    name = f"{args.client}-{secrets.token_hex(3)}"
    token, secret = _tokens(settings).create(name, args.token_scope, actor=_actor())
    print(f"created token {token.name!r} ({token.scope}) for {args.client}")
    return secret


def _auth_note(target: clients.Target) -> None:
    if target.oauth:
        print("the client opens a browser to log in on first use (docs/remote-access.md)")
    elif not target.token:
        print("the token is read from KENNING_TOKEN (kenning token create --scope write)")


def _actor() -> str:
    try:
        return f"cli:connect:{getpass.getuser()}"
    except OSError:
        return "cli:connect"
