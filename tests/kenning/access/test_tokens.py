"""Scoped bearer tokens: hashed at rest, listed by name, revoked, audited;
and the `kenning token` CLI."""

from __future__ import annotations

from typing import Any

import pytest
import valkey

from kenning.access.tokens import SECRET_PREFIX, Tokens, digest, grants
from kenning.core.clock import ManualClock
from kenning.core.errors import Conflict, InvalidInput, NotFound
from kenning.core.settings import Settings
from kenning.store import Store
from kenning_cli.main import main


@pytest.fixture
def tokens(client: valkey.Valkey, settings: Settings, clock: ManualClock) -> Tokens:
    return Tokens(Store(client, settings.key_prefix), clock)


def test_scopes_are_ordered() -> None:
    assert grants("read") == {"read"}
    assert grants("write") == {"read", "write"}
    assert grants("admin") == {"read", "write", "admin"}
    assert grants("root") == frozenset()


def test_a_token_verifies_and_only_its_digest_is_stored(
    tokens: Tokens, client: valkey.Valkey, settings: Settings
) -> None:
    token, secret = tokens.create("laptop-claude", "write", actor="alice")
    assert secret.startswith(SECRET_PREFIX)
    assert len(secret) > 40
    assert tokens.verify(secret) == token
    assert (token.name, token.scope, token.created_by) == ("laptop-claude", "write", "alice")
    layout = Store(client, settings.key_prefix).tokens  # the key names of the store's layout
    stored = list(client.scan_iter(match=f"{layout.prefix}token*"))
    assert stored  # positive control: the token is in Valkey ...
    for key in stored:
        values: Any = client.hgetall(key)
        flat = b" ".join([key, *values.keys(), *values.values()])
        assert secret.encode() not in flat  # ... but never its secret
    assert client.exists(layout.key(digest(secret)))


def test_wrong_secrets_do_not_verify(tokens: Tokens) -> None:
    _, secret = tokens.create("ci", "read", actor="alice")
    assert tokens.verify(secret) is not None  # positive control
    for wrong in (
        secret[:-1],
        secret + "x",
        "",
        "Bearer " + secret,
        secret.removeprefix(SECRET_PREFIX),
    ):
        assert tokens.verify(wrong) is None, wrong


def test_list_revoke_and_audit(tokens: Tokens, client: valkey.Valkey, settings: Settings) -> None:
    _, first = tokens.create("b-reader", "read", actor="alice")
    tokens.create("a-admin", "admin", actor="alice")
    assert [(t.name, t.scope) for t in tokens.all()] == [("a-admin", "admin"), ("b-reader", "read")]
    revoked = tokens.revoke("b-reader", actor="bob")
    assert revoked.name == "b-reader"
    assert tokens.verify(first) is None
    assert [t.name for t in tokens.all()] == ["a-admin"]
    events = Store(client, settings.key_prefix).audit.recent(limit=10)
    assert [(e.action, e.actor, e.details["name"]) for e in events] == [
        ("token_revoke", "bob", "b-reader"),
        ("token_create", "alice", "a-admin"),
        ("token_create", "alice", "b-reader"),
    ]


def test_bad_names_scopes_and_clashes_are_refused(tokens: Tokens) -> None:
    tokens.create("taken", "read", actor="alice")
    with pytest.raises(Conflict, match="exists"):
        tokens.create("taken", "write", actor="alice")
    with pytest.raises(InvalidInput, match="unknown scope"):
        tokens.create("fine", "root", actor="alice")
    with pytest.raises(InvalidInput, match="not allowed"):
        tokens.create("has space", "read", actor="alice")
    with pytest.raises(NotFound, match="no token named"):
        tokens.revoke("never-created", actor="alice")
    # the name is the audit actor: no impersonating ours
    for actor in ("local", "Maintenance", "anonymous"):
        with pytest.raises(InvalidInput, match="reserved"):
            tokens.create(actor, "admin", actor="alice")
    assert [t.name for t in tokens.all()] == ["taken"]


@pytest.mark.usefixtures("cli_env")
def test_the_cli_creates_lists_and_revokes(
    tokens: Tokens, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["token", "create", "--scope", "write", "--name", "ci-bot"]) == 0
    out = capsys.readouterr().out.splitlines()
    secret = out[-1]
    assert secret.startswith(SECRET_PREFIX)
    assert secret not in " ".join(out[:-1])
    assert tokens.verify(secret) is not None
    assert main(["token", "create", "--scope", "read"]) == 0
    unnamed = capsys.readouterr().out.splitlines()[-1]
    assert tokens.verify(unnamed) is not None
    assert tokens.verify(unnamed).name.startswith("read-")  # type: ignore[union-attr]
    assert main(["token", "create", "--scope", "write", "--profile", "curator"]) == 0
    reviewer = capsys.readouterr().out.splitlines()
    assert "profile curator" in reviewer[0]
    assert tokens.verify(reviewer[-1]).profile == "curator"  # type: ignore[union-attr]
    assert main(["token", "list"]) == 0
    listing = capsys.readouterr().out
    assert "ci-bot\twrite\tdefault\t" in listing  # no profile chosen: the server's default
    assert "\twrite\tcurator\t" in listing
    assert secret not in listing
    assert main(["token", "revoke", "ci-bot"]) == 0
    assert tokens.verify(secret) is None
    assert main(["token", "revoke", "ci-bot"]) == 1
    assert "no token named 'ci-bot'" in capsys.readouterr().err


def test_a_token_may_name_a_profile_and_an_unknown_one_names_the_valid_ones(
    tokens: Tokens, client: valkey.Valkey, settings: Settings
) -> None:
    token, secret = tokens.create("reviewer", "write", actor="alice", profile="curator")
    assert (token.profile, tokens.verify(secret)) == ("curator", token)
    plain, plain_secret = tokens.create("plain", "write", actor="alice")
    assert plain.profile is None
    stored: Any = client.hgetall(
        Store(client, settings.key_prefix).tokens.key(digest(plain_secret))
    )
    assert b"scope" in stored  # positive control: the record is there ...
    assert b"profile" not in stored  # ... as tokens made before profiles have it
    with pytest.raises(InvalidInput, match="unknown profile 'reader'") as refused:
        tokens.create("other", "read", actor="alice", profile="reader")
    assert refused.value.hint == "use one of agent, curator, all"
    assert [t.name for t in tokens.all()] == ["plain", "reviewer"]
