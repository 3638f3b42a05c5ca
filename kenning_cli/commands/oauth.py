"""`kenning oauth clients|grants|revoke CLIENT|revoke-grant CLIENT USER`: the OAuth clients that
registered, what people granted them and when each was last used (docs/remote-access.md). Revoking
a client or a grant ends every token it holds at once; the dashboard's Connections page does the
same (kenning.access.connections)."""

from __future__ import annotations

import argparse

from kenning.access.accounts import Accounts
from kenning.access.connections import Connections
from kenning.core.clock import SystemClock
from kenning.core.models import iso
from kenning.core.settings import Settings
from kenning_cli.commands.tokens import _actor
from kenning_cli.registry import command

REASON = "revoked with `kenning oauth`"


def _arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    sub.add_parser("clients", help="list registered OAuth clients (and when each last got tokens)")
    sub.add_parser(
        "grants", help="list who granted which client which scopes (and the last refresh)"
    )
    revoke = sub.add_parser(
        "revoke", help="revoke a client: its tokens stop at once, it must register again"
    )
    revoke.add_argument("client_id")
    revoke.add_argument("--reason", default=REASON, help="why, for the audit log")
    grant = sub.add_parser(
        "revoke-grant",
        help="revoke one person's grant to a client: its tokens stop at once, the client stays",
    )
    grant.add_argument("client_id")
    grant.add_argument("username")
    grant.add_argument("--reason", default=REASON, help="why, for the audit log")


def _connections(settings: Settings) -> Connections:
    from kenning.store import Store, connect

    store = Store(connect(settings), settings.key_prefix)
    clock = SystemClock()
    return Connections.build(store, clock, Accounts(store, clock), settings)


@command(
    "oauth",
    "List OAuth clients and grants, or revoke a client or a grant (remote MCP access).",
    _arguments,
)
def _oauth_command(args: argparse.Namespace, settings: Settings) -> int:
    connections = _connections(settings)
    if args.action == "clients":
        for seen in connections.listing().clients:
            client, hosts = seen.client, " ".join(seen.client.redirect_uris)
            print(
                f"{client.client_id}\t{client.name}\t{client.auth_method}"
                f"\t{iso(client.created_at)}\t{hosts}\tlast used {iso(seen.last_used) or 'never'}"
            )
    elif args.action == "grants":
        for held in connections.listing().grants:
            grant = held.grant
            print(
                f"{grant.client_id}\t{grant.client_name}\t{grant.username}"
                f"\t{' '.join(grant.scopes)}\t{iso(grant.granted_at)}"
                f"\tlast refresh {iso(held.last_refresh) or 'never'}"
            )
    elif args.action == "revoke":
        client = connections.revoke_client(args.client_id, actor=_actor(), reason=args.reason)
        print(
            f"revoked OAuth client {client.client_id!r} ({client.name}); its tokens no longer work"
        )
    else:
        revoked = connections.revoke_grant(
            args.client_id, args.username, actor=_actor(), reason=args.reason
        )
        print(
            f"revoked {revoked.username}'s grant to {revoked.client_id!r} ({revoked.client_name});"
            " its tokens no longer work"
        )
    return 0
