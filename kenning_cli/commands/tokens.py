"""`kenning token create|list|revoke`: bearer tokens for the MCP server (docs/mcp-server.md).

``create`` prints the secret once, alone on the last line of stdout, so a script can capture it with
``tail -n 1``. The store keeps only its sha256.
"""

from __future__ import annotations

import argparse
import getpass
import hashlib
import secrets

from kenning.access.tokens import PROFILES, SCOPES, Tokens
from kenning.core.clock import SystemClock
from kenning.core.models import iso
from kenning.core.settings import Settings
from kenning_cli.registry import command


def _arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = sub.add_parser("create", help="create a token and print its secret (once)")
    create.add_argument(
        "--scope", choices=SCOPES, required=True, help="read, write (includes read) or admin"
    )
    create.add_argument(
        "--profile",
        choices=PROFILES,
        help=(
            "tools the MCP server shows it: agent (the few an agent uses mid-task), curator "
            "(review work) or all (default: KENNING_MCP_PROFILE); never more than its scope"
        ),
    )
    create.add_argument(
        "--name",
        help=("who or what uses it; the audit actor (default: SCOPE-<random>), e.g. laptop-claude"),
    )
    create.add_argument(
        "--idempotency-key",
        metavar="KEY",
        help=(
            "your id for this create (22+ characters, e.g. a UUID): run again with the same KEY "
            "within 15 minutes and it prints the same token and secret instead of a new one"
        ),
    )
    sub.add_parser("list", help="list tokens (names and scopes, never secrets)")
    revoke = sub.add_parser("revoke", help="revoke a token by name")
    revoke.add_argument("name")


def _tokens(settings: Settings) -> Tokens:
    from kenning.store import Store, connect

    return Tokens(Store(connect(settings), settings.key_prefix), SystemClock())


def _actor() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except OSError:  # no user name in some containers
        return "cli"


@command("token", "Create, list or revoke MCP bearer tokens.", _arguments)
def _token(args: argparse.Namespace, settings: Settings) -> int:
    tokens = _tokens(settings)
    if args.action == "create":
        _create(tokens, args)
    elif args.action == "list":
        for item in tokens.all():
            profile = item.profile or "default"
            print(
                f"{item.name}\t{item.scope}\t{profile}\t{iso(item.created_at)}\t{item.created_by}"
            )
    else:
        revoked = tokens.revoke(args.name, actor=_actor())
        print(f"revoked token {revoked.name!r} ({revoked.scope})")
    return 0


def _create(tokens: Tokens, args: argparse.Namespace) -> None:
    if args.idempotency_key is None:
        name = args.name or f"{args.scope}-{secrets.token_hex(3)}"
        token, secret = tokens.create(name, args.scope, actor=_actor(), profile=args.profile)
        replayed = False
    else:  # a retry must name the same token: the default name is derived from the key
        name = (
            args.name
            or f"{args.scope}-{hashlib.sha256(args.idempotency_key.encode()).hexdigest()[:6]}"
        )
        minted = tokens.create_once(
            name,
            args.scope,
            actor=_actor(),
            profile=args.profile,
            idempotency_key=args.idempotency_key,
        )
        token, secret, replayed = minted.token, minted.secret, minted.replayed
    profile = f", profile {token.profile}" if token.profile else ""
    if replayed:
        print(
            f"token {token.name!r} with scope {token.scope}{profile} was created by the first "
            "call with this idempotency key; its secret again, below:"
        )
    else:
        print(
            f"created token {token.name!r} with scope {token.scope}{profile}; the "
            "secret is shown once, below:"
        )
    print(secret)
