"""Who is connected (kenning.access.connections) against the real store: clients and grants with
when they were last used, and revoking a grant or a client ends its tokens at once, audited with
the actor and the reason."""

from __future__ import annotations

import pytest

from kenning.access.accounts import Accounts
from kenning.access.connections import Connections
from kenning.access.oauth import ClientInfo, Issued, OAuth
from kenning.core.clock import ManualClock
from kenning.core.errors import InvalidInput, NotFound
from kenning.core.models import iso
from kenning.engine import Engine
from kenning_cli.main import main


def client(client_id: str, name: str) -> ClientInfo:
    return ClientInfo(
        client_id=client_id,
        name=name,
        redirect_uris=(f"http://localhost/{client_id}/cb",),
        scope="read write",
        auth_method="none",
        grant_types=("authorization_code", "refresh_token"),
        created_at=1_790_000_000.0,
        secret_digest="",
        metadata={},
    )


def connect(oauth: OAuth, client_id: str, username: str) -> Issued:
    """One person's login and consent, and the tokens the client gets for the code."""
    request = oauth.begin(
        client_id,
        f"http://localhost/{client_id}/cb",
        True,
        ["read", "offline_access"],
        None,
        "x" * 43,
        "http://127.0.0.1/mcp",
    )
    code, _ = oauth.approve(request.id, username, ["read", "offline_access"])
    issued = oauth.redeem(code, refresh=True)
    assert issued is not None
    return issued


@pytest.fixture
def oauth(engine: Engine) -> OAuth:
    accounts = Accounts(engine.store, engine.ctx.clock)
    for name in ("ana", "ben"):
        accounts.create(name, "a long enough password", "editor", actor="admin")
    oauth = OAuth(engine.store, engine.ctx.clock, accounts)
    oauth.register(client("c1", "Cursor"), ip="10.0.0.1")
    oauth.register(client("c2", "Claude"), ip="10.0.0.1")
    return oauth


def test_last_used_is_recorded_when_tokens_are_issued(
    oauth: OAuth, clock: ManualClock, engine: Engine
) -> None:
    connections = Connections(oauth)
    before = connections.listing().public()
    assert [(c["client_id"], c["last_used"]) for c in before["clients"]] == [
        ("c1", None),
        ("c2", None),
    ]
    issued = connect(oauth, "c1", "ana")
    redeemed_at = clock.now()
    clock.advance(600)
    assert issued.refresh_token is not None
    assert oauth.rotate(issued.refresh_token, []) is not None
    listed = connections.listing().public()
    assert [(c["client_id"], c["last_used"]) for c in listed["clients"]] == [
        ("c1", iso(clock.now())),
        ("c2", None),
    ]
    assert listed["grants"] == [
        {
            "client_id": "c1",
            "client_name": "Cursor",
            "username": "ana",
            "scopes": ["read", "offline_access"],
            "issued_at": iso(redeemed_at),
            "last_refresh": iso(clock.now()),
            "live_token_families": 1,
        }
    ]


def test_revoking_a_grant_ends_its_tokens_and_no_others(oauth: OAuth, engine: Engine) -> None:
    connections = Connections(oauth)
    ana, ben = connect(oauth, "c1", "ana"), connect(oauth, "c1", "ben")
    assert oauth.access(ana.access_token) is not None  # the positive control
    revoked = connections.revoke_grant("c1", "ana", actor="web:admin", reason="lost laptop")
    assert (revoked.client_id, revoked.username) == ("c1", "ana")
    assert oauth.access(ana.access_token) is None
    assert ana.refresh_token is not None
    assert oauth.rotate(ana.refresh_token, []) is None
    assert oauth.access(ben.access_token) is not None  # another person's grant stays
    assert oauth.client("c1") is not None  # the client stays registered
    assert [(g["client_id"], g["username"]) for g in connections.listing().public()["grants"]] == [
        ("c1", "ben")
    ]
    event = engine.history.audit_log(action="oauth_grant_revoke", limit=1).events[0]
    assert (event.actor, event.reason) == ("web:admin", "lost laptop")
    assert event.details["username"] == "ana"
    assert event.details["families"] == 1
    with pytest.raises(NotFound):
        connections.revoke_grant("c1", "ana", actor="web:admin", reason="again")


def test_a_code_approved_before_the_grant_was_revoked_gets_no_tokens(oauth: OAuth) -> None:
    def approved() -> str:
        request = oauth.begin(
            "c1", "http://localhost/c1/cb", True, ["read"], None, "x" * 43, "http://127.0.0.1/mcp"
        )
        return oauth.approve(request.id, "ana", ["read"])[0]

    assert oauth.redeem(approved(), refresh=False) is not None  # the positive control
    code = approved()
    Connections(oauth).revoke_grant("c1", "ana", actor="web:admin", reason="lost laptop")
    assert oauth.redeem(code, refresh=False) is None


def test_revoking_a_client_is_audited_with_its_reason(oauth: OAuth, engine: Engine) -> None:
    connections = Connections(oauth)
    issued = connect(oauth, "c2", "ana")
    with pytest.raises(InvalidInput):  # a reason is required; nothing is revoked without one
        connections.revoke_client("c2", actor="web:admin", reason=" ")
    assert oauth.access(issued.access_token) is not None
    connections.revoke_client("c2", actor="web:admin", reason="we stopped using it")
    assert oauth.access(issued.access_token) is None
    listed = connections.listing().public()
    assert [c["client_id"] for c in listed["clients"]] == ["c1"]
    assert listed["grants"] == []
    assert engine.store.oauth.seen() == {}  # its activity went with it
    event = engine.history.audit_log(action="oauth_client_revoke", limit=1).events[0]
    assert (event.actor, event.reason) == ("web:admin", "we stopped using it")


def test_the_cli_lists_and_revokes_a_grant(
    oauth: OAuth,
    engine: Engine,
    cli_env: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    issued = connect(oauth, "c1", "ana")
    assert main(["oauth", "grants"]) == 0
    assert "c1\tCursor\tana\tread offline_access\t" in capsys.readouterr().out
    assert main(["oauth", "clients"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed[0].startswith("c1\tCursor\tnone\t")
    assert listed[0].endswith("\tlast used " + str(iso(engine.ctx.clock.now())))
    assert listed[1].endswith("\tlast used never")
    assert oauth.access(issued.access_token) is not None  # the positive control
    assert main(["oauth", "revoke-grant", "c1", "ana", "--reason", "left the team"]) == 0
    assert "its tokens no longer work" in capsys.readouterr().out
    assert oauth.access(issued.access_token) is None
    event = engine.history.audit_log(action="oauth_grant_revoke", limit=1).events[0]
    assert event.reason == "left the team"
    assert event.actor.startswith("cli")
    assert main(["oauth", "grants"]) == 0
    assert capsys.readouterr().out == ""
    assert main(["oauth", "revoke-grant", "c1", "ana"]) == 1  # nothing left to revoke
