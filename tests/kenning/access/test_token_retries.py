"""Idempotent token creation: a retry with the caller's idempotency key gets the same token and
secret, parallel calls mint one, and the secret is never stored in clear -- only sealed under the
key, for the retry window (kenning/access/sealed.py; docs/reliability.md, "Tokens")."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import valkey

from kenning.access.tokens import Minted, Tokens
from kenning.core.clock import ManualClock
from kenning.core.errors import Conflict, InvalidInput
from kenning.core.settings import Settings
from kenning.store import Store
from kenning_cli.main import main

KEY = "4f1d2c3b-9a8e-4d7c-b6a5-0e1f2a3b4c5d"


@pytest.fixture
def tokens(client: valkey.Valkey, settings: Settings, clock: ManualClock) -> Tokens:
    return Tokens(Store(client, settings.key_prefix), clock)


def everything_stored(client: valkey.Valkey, prefix: str) -> bytes:
    """Every key under the prefix and every value it holds, as one byte string."""
    parts: list[bytes] = []
    for key in client.scan_iter(match=f"{prefix}*"):
        kind: Any = client.type(key)
        values: Any
        if kind == b"string":
            values = [client.get(key)]
        elif kind == b"hash":
            mapping: Any = client.hgetall(key)
            values = [b for pair in mapping.items() for b in pair]
        elif kind == b"stream":
            entries: Any = client.xrange(key)
            values = [repr(entry).encode() for entry in entries]
        elif kind == b"set":
            members: Any = client.smembers(key)
            values = list(members)
        else:
            values = client.lrange(key, 0, -1) if kind == b"list" else client.zrange(key, 0, -1)
        parts += [key, *values]
    return b" ".join(parts)


def test_parallel_creates_with_one_key_mint_one_token_and_store_no_secret(
    tokens: Tokens, client: valkey.Valkey, settings: Settings
) -> None:
    minted: list[Minted | None] = [None] * 6
    start = threading.Barrier(len(minted))

    def create(n: int) -> None:
        start.wait()
        minted[n] = tokens.create_once(
            "laptop-claude", "write", actor="cli:ana", idempotency_key=KEY
        )

    threads = [threading.Thread(target=create, args=(n,)) for n in range(len(minted))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    done = [m for m in minted if m is not None]
    assert len(done) == len(minted)
    assert len({m.secret for m in done}) == 1
    assert sorted(m.replayed for m in done) == [False] + [True] * (len(minted) - 1)
    secret = done[0].secret
    assert tokens.verify(secret) == done[0].token  # positive control: it is a live token
    assert [t.name for t in tokens.all()] == ["laptop-claude"]
    stored = everything_stored(client, settings.key_prefix)
    assert b"token_create" in stored  # positive control: the scan sees the audit stream ...
    assert secret.encode() not in stored  # ... and no secret in clear anywhere
    assert KEY.encode() not in stored  # nor the key that opens the seal
    events = Store(client, settings.key_prefix).audit.recent(action="token_create")
    assert len(events) == 1
    # a later retry within the window: the same token and secret again
    again = tokens.create_once("laptop-claude", "write", actor="cli:ana", idempotency_key=KEY)
    assert (again.secret, again.replayed) == (secret, True)


def test_a_key_reused_elsewhere_or_after_a_revoke_is_refused(tokens: Tokens) -> None:
    first = tokens.create_once("ci", "read", actor="cli:ana", idempotency_key=KEY)
    with pytest.raises(Conflict, match="used for a different token create request"):
        tokens.create_once("ci", "write", actor="cli:ana", idempotency_key=KEY)
    # another caller's same key is another key: its own token (here the name is taken)
    with pytest.raises(Conflict, match="a token named 'ci' exists"):
        tokens.create_once("ci", "read", actor="cli:bo", idempotency_key=KEY)
    with pytest.raises(InvalidInput, match="idempotency key 'short-key-1' is not allowed"):
        tokens.create_once("ci2", "read", actor="cli:ana", idempotency_key="short-key-1")
    tokens.revoke("ci", actor="cli:ana")
    with pytest.raises(Conflict, match="revoked since"):
        tokens.create_once("ci", "read", actor="cli:ana", idempotency_key=KEY)
    assert tokens.verify(first.secret) is None
    # the positive control: a new key mints a new token
    fresh = tokens.create_once("ci", "read", actor="cli:ana", idempotency_key=KEY + "-2")
    assert fresh.replayed is False
    assert tokens.verify(fresh.secret) is not None


@pytest.mark.usefixtures("cli_env")
def test_the_cli_prints_the_same_token_for_a_retry_with_its_key(
    tokens: Tokens, capsys: pytest.CaptureFixture[str]
) -> None:
    create = ["token", "create", "--scope", "read", "--idempotency-key", KEY]
    assert main(create) == 0
    first = capsys.readouterr().out.splitlines()
    assert first[0].startswith("created token 'read-")
    assert main(create) == 0
    retry = capsys.readouterr().out.splitlines()
    assert retry[-1] == first[-1]
    assert "was created by the first call with this idempotency key" in retry[0]
    assert len(tokens.all()) == 1
    assert tokens.verify(first[-1]) is not None
    assert main(["token", "create", "--scope", "read", "--idempotency-key", "tiny"]) == 1
    assert "idempotency key 'tiny' is not allowed" in capsys.readouterr().err
