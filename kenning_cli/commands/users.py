"""`kenning user create|passwd|list|disable|enable`: accounts for the OAuth login and the dashboard
(docs/accounts.md).

A password never comes from argv (it would sit in the shell history and the process list): it is
read from a prompt, or from the first line of stdin with ``--password-stdin``.
"""

from __future__ import annotations

import argparse
import getpass
import sys

from kenning.access.accounts import ROLES, Accounts
from kenning.core.clock import SystemClock
from kenning.core.errors import InvalidInput
from kenning.core.models import iso
from kenning.core.settings import Settings
from kenning_cli.commands.tokens import _actor
from kenning_cli.registry import command


def _arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = sub.add_parser("create", help="create an account (asks for the password)")
    create.add_argument("username")
    create.add_argument(
        "--role",
        choices=ROLES,
        required=True,
        help="viewer (read), editor (read and write) or admin",
    )
    passwd = sub.add_parser("passwd", help="set an account's password (asks for it)")
    passwd.add_argument("username")
    for p in (create, passwd):
        p.add_argument(
            "--password-stdin",
            action="store_true",
            help="read the password from the first line of stdin instead of a prompt",
        )
    sub.add_parser("list", help="list accounts (never passwords)")
    for action in ("disable", "enable"):
        sub.add_parser(action, help=f"{action} an account").add_argument("username")


def _accounts(settings: Settings) -> Accounts:
    from kenning.store import Store, connect

    return Accounts(Store(connect(settings), settings.key_prefix), SystemClock())


def _password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    if not sys.stdin.isatty():
        # getpass would fall back to echoing stdin, or die of EOFError with a traceback
        raise InvalidInput(
            "no terminal to ask the password on (stdin is not a TTY)",
            hint="give it on stdin: printf '%s\\n' \"$PASSWORD\" | kenning user create NAME "
            "--password-stdin",
        )
    first = getpass.getpass("password: ")
    if getpass.getpass("again: ") != first:
        raise InvalidInput("the two passwords differ", hint="type the same password twice")
    return first


@command(
    "user",
    "Create, list, disable accounts or set their passwords (OAuth login, dashboard).",
    _arguments,
)
def _user(args: argparse.Namespace, settings: Settings) -> int:
    accounts = _accounts(settings)
    if args.action == "create":
        account = accounts.create(
            args.username, _password(args.password_stdin), args.role, actor=_actor()
        )
        print(f"created account {account.username!r} with role {account.role}")
    elif args.action == "passwd":
        account = accounts.set_password(
            args.username, _password(args.password_stdin), actor=_actor()
        )
        print(f"password changed for {account.username!r}")
    elif args.action == "list":
        for item in accounts.list():
            state = "disabled" if item.disabled else "enabled"
            print(f"{item.username}\t{item.role}\t{state}\t{iso(item.created_at)}")
    else:
        change = accounts.disable if args.action == "disable" else accounts.enable
        account = change(args.username, actor=_actor())
        print(f"{args.action}d account {account.username!r}")
    return 0
