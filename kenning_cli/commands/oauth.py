"""`kenning oauth clients|grants|revoke CLIENT`: the OAuth clients that registered and what people
granted them (docs/remote-access.md). Revoking a client ends every token it holds at once."""

from __future__ import annotations

import argparse

from kenning.access.accounts import Accounts
from kenning.access.oauth import OAuth
from kenning.core.clock import SystemClock
from kenning.core.models import iso
from kenning.core.settings import Settings
from kenning_cli.commands.tokens import _actor
from kenning_cli.registry import command


def _arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    sub.add_parser("clients", help="list registered OAuth clients")
    sub.add_parser("grants", help="list who granted which client which scopes")
    revoke = sub.add_parser(
        "revoke", help="revoke a client: its tokens stop at once, it must register again"
    )
    revoke.add_argument("client_id")


def _oauth(settings: Settings) -> OAuth:
    from kenning.store import Store, connect

    store = Store(connect(settings), settings.key_prefix)
    clock = SystemClock()
    return OAuth(store, clock, Accounts(store, clock))


@command(
    "oauth", "List OAuth clients and grants, or revoke a client (remote MCP access).", _arguments
)
def _oauth_command(args: argparse.Namespace, settings: Settings) -> int:
    oauth = _oauth(settings)
    if args.action == "clients":
        for client in oauth.clients():
            hosts = " ".join(client.redirect_uris)
            print(
                f"{client.client_id}\t{client.name}\t{client.auth_method}"
                f"\t{iso(client.created_at)}\t{hosts}"
            )
    elif args.action == "grants":
        for grant in oauth.grants():
            print(
                f"{grant.client_id}\t{grant.client_name}\t{grant.username}"
                f"\t{' '.join(grant.scopes)}\t{iso(grant.granted_at)}"
            )
    else:
        client = oauth.revoke_client(args.client_id, actor=_actor())
        print(
            f"revoked OAuth client {client.client_id!r} ({client.name}); its tokens no longer work"
        )
    return 0
