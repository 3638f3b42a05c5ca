"""Accounts (argon2 passwords, roles, throttled logins, audit), login sessions,
and the `kenning user` CLI."""

from __future__ import annotations

import io
import threading
from typing import Any

import pytest
import valkey

from kenning.access.accounts import LOGIN_WINDOW_SECONDS, Accounts, role_scope
from kenning.access.sessions import Sessions
from kenning.core.clock import ManualClock
from kenning.core.errors import Conflict, InvalidInput, NotFound, PermissionDenied, RateLimited
from kenning.core.settings import Settings
from kenning.store import AuditEvent, Store
from kenning_cli.main import main

PW = "correct horse battery"


@pytest.fixture
def store(client: valkey.Valkey, settings: Settings) -> Store:
    return Store(client, settings.key_prefix)


@pytest.fixture
def accounts(store: Store, clock: ManualClock) -> Accounts:
    return Accounts(store, clock)


@pytest.fixture
def sessions(store: Store, clock: ManualClock, accounts: Accounts) -> Sessions:
    return Sessions(store, clock, accounts)


def _dump(client: valkey.Valkey, prefix: str) -> bytes:
    """Every key, hash field and value under the prefix, as one byte string."""
    parts: list[bytes] = []
    for key in client.scan_iter(match=f"{prefix}*"):
        parts.append(key)
        if client.type(key) == b"hash":
            values: Any = client.hgetall(key)
            parts.extend([*values.keys(), *values.values()])
    return b" ".join(parts)


def test_roles_map_to_scopes() -> None:
    assert [role_scope(r) for r in ("viewer", "editor", "admin")] == ["read", "write", "admin"]
    with pytest.raises(InvalidInput, match="unknown role"):
        role_scope("root")


def test_an_account_authenticates_and_its_password_is_only_hashed(
    accounts: Accounts, client: valkey.Valkey, settings: Settings
) -> None:
    created = accounts.create("alice", PW, "editor", actor="cli:root")
    assert (created.username, created.role, created.disabled) == ("alice", "editor", False)
    assert accounts.authenticate("alice", PW, ip="10.0.0.1") == created
    # typed with caps and spaces
    assert accounts.authenticate(" Alice ", PW, ip="10.0.0.1") == created
    dump = _dump(client, settings.key_prefix)
    assert b"account:alice" in dump
    assert b"$argon2id$" in dump
    assert PW.encode() not in dump


def test_wrong_unknown_and_disabled_logins_fail_alike_and_are_audited(
    accounts: Accounts, store: Store
) -> None:
    accounts.create("alice", PW, "viewer")
    accounts.create("bob", PW, "viewer")
    assert accounts.authenticate("bob", PW, ip="10.0.0.2").username == "bob"  # positive control
    accounts.disable("bob", actor="cli:root")
    for username, password in (
        ("alice", PW + "x"),
        ("nobody", PW),
        ("bob", PW),
        ("", ""),
        ("a" * 500, PW),
    ):
        with pytest.raises(PermissionDenied, match="wrong username or password"):
            accounts.authenticate(username, password, ip="10.0.0.3")
    failed = store.audit.recent(limit=20, action="login_failed")
    assert len(failed) == 5
    assert {e.actor for e in failed} == {"ip:10.0.0.3"}
    assert [e.details["reason"] for e in failed][2] == "disabled"


def test_logins_are_throttled_per_account(
    accounts: Accounts, clock: ManualClock, store: Store
) -> None:
    # the start of a window, so the advance below leaves it
    clock.value = LOGIN_WINDOW_SECONDS * 2_000_000
    accounts.create("alice", PW, "editor")
    accounts.create("carol", PW, "editor")
    for i in range(5):
        with pytest.raises(PermissionDenied):
            accounts.authenticate("alice", "guess-number-" + str(i), ip=f"10.1.0.{i}")
    with pytest.raises(RateLimited, match="too many failed logins"):
        accounts.authenticate("alice", PW, ip="10.9.9.9")  # the right password, too late
    # another account is fine
    assert accounts.authenticate("carol", PW, ip="10.9.9.9").username == "carol"
    with pytest.raises(RateLimited):
        accounts.authenticate("alice", PW, ip="10.9.9.9")
    throttled = store.audit.recent(limit=10, action="login_throttled")
    # one event per address and window
    assert [e.details["username"] for e in throttled] == ["alice"]
    clock.advance(LOGIN_WINDOW_SECONDS)
    assert accounts.authenticate("alice", PW, ip="10.9.9.9").username == "alice"


def test_logins_are_throttled_per_address(accounts: Accounts, clock: ManualClock) -> None:
    clock.value = LOGIN_WINDOW_SECONDS * 2_000_000
    accounts.create("alice", PW, "editor")
    for i in range(20):
        with pytest.raises(PermissionDenied):
            accounts.authenticate(f"user{i}", PW, ip="10.2.0.1")
    with pytest.raises(RateLimited):
        accounts.authenticate("alice", PW, ip="10.2.0.1")
    assert accounts.authenticate("alice", PW, ip="10.2.0.2").username == "alice"  # positive control


def test_bad_input_is_refused_and_nothing_is_written(accounts: Accounts) -> None:
    accounts.create("taken", PW, "viewer")
    with pytest.raises(Conflict, match="exists"):
        accounts.create("taken", PW, "admin")
    cases = [
        ("Has Space", PW, "viewer", "not allowed"),
        ("system", PW, "viewer", "reserved"),
        ("short-pw", "2short", "viewer", "10 to 1024"),
        ("spaces", " " * 12, "viewer", "only spaces"),
        ("badrole", PW, "root", "unknown role"),
    ]
    for username, password, role, message in cases:
        with pytest.raises(InvalidInput, match=message):
            accounts.create(username, password, role)
    assert [a.username for a in accounts.list()] == ["taken"]
    assert accounts.get("taken") is not None
    assert accounts.get("never") is None
    with pytest.raises(NotFound, match="no account named"):
        accounts.set_password("never", PW)


def test_password_role_and_disable_changes_are_audited(accounts: Accounts, store: Store) -> None:
    accounts.create("alice", PW, "viewer", actor="cli:root")
    accounts.set_password("alice", PW + " two", actor="cli:root")
    with pytest.raises(PermissionDenied):
        accounts.authenticate("alice", PW, ip="10.0.0.1")
    assert accounts.authenticate("alice", PW + " two", ip="10.0.0.1").role == "viewer"
    assert accounts.set_role("alice", "editor", actor="cli:root").role == "editor"
    assert accounts.disable("alice", actor="cli:root").disabled
    assert accounts.list()[0].disabled
    assert not accounts.enable("alice", actor="cli:root").disabled
    actions = [
        (e.action, e.actor) for e in store.audit.recent(limit=10) if e.action.startswith("account")
    ]
    assert actions == [
        ("account_enable", "cli:root"),
        ("account_disable", "cli:root"),
        ("account_role", "cli:root"),
        ("account_password", "cli:root"),
        ("account_create", "cli:root"),
    ]


def test_sessions_live_hashed_expire_and_follow_the_account(
    accounts: Accounts,
    sessions: Sessions,
    clock: ManualClock,
    client: valkey.Valkey,
    settings: Settings,
) -> None:
    accounts.create("alice", PW, "editor")
    session_id, session = sessions.create("alice", ttl_seconds=3600)
    assert (session.username, session.role, session.expires_at) == (
        "alice",
        "editor",
        clock.now() + 3600,
    )
    assert sessions.get(session_id) == session
    assert session.csrf_ok(session.csrf_token)
    assert not session.csrf_ok("forged")
    assert not session.csrf_ok(None)
    dump = _dump(client, settings.key_prefix)
    assert b"session:" in dump
    assert session.csrf_token.encode() in dump
    assert session_id.encode() not in dump
    accounts.set_role("alice", "viewer")
    assert sessions.get(session_id).role == "viewer"  # type: ignore[union-attr]
    clock.advance(1)
    accounts.disable("alice")
    assert sessions.get(session_id) is None
    accounts.enable("alice")
    assert sessions.get(session_id) is None  # a disable ends the account's sessions for good
    fresh, _ = sessions.create("alice", ttl_seconds=3600)
    assert sessions.get(fresh) is not None
    clock.advance(3600)
    assert sessions.get(fresh) is None
    second, _ = sessions.create("alice", ttl_seconds=600)
    assert sessions.destroy(second)
    assert sessions.get(second) is None
    assert sessions.get("") is None
    assert sessions.get(second + "x") is None
    with pytest.raises(PermissionDenied):
        sessions.create("nobody", ttl_seconds=600)


@pytest.mark.usefixtures("cli_env")
def test_the_cli_creates_lists_changes_and_disables(
    monkeypatch: pytest.MonkeyPatch,
    accounts: Accounts,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(PW + "\n"))
    assert main(["user", "create", "alice", "--role", "editor", "--password-stdin"]) == 0
    assert "created account 'alice' with role editor" in capsys.readouterr().out
    assert accounts.authenticate("alice", PW, ip="127.0.0.1").role == "editor"
    monkeypatch.setattr("sys.stdin", io.StringIO("new " + PW + "\n"))
    assert main(["user", "passwd", "alice", "--password-stdin"]) == 0
    assert accounts.authenticate("alice", "new " + PW, ip="127.0.0.1").username == "alice"
    assert main(["user", "list"]) == 0
    listing = capsys.readouterr().out
    assert "alice\teditor\tenabled" in listing
    assert PW not in listing
    assert main(["user", "disable", "alice"]) == 0
    assert accounts.get("alice").disabled  # type: ignore[union-attr]
    monkeypatch.setattr("sys.stdin", io.StringIO("short\n"))
    assert main(["user", "create", "bob", "--role", "viewer", "--password-stdin"]) == 1
    assert "10 to 1024" in capsys.readouterr().err
    assert accounts.get("bob") is None


def test_a_signed_in_admin_cannot_lock_themselves_out(accounts: Accounts) -> None:
    accounts.create("ana", "correct horse battery staple", "admin", actor="pytest")
    accounts.create("bo", "correct horse battery staple", "admin", actor="pytest")
    with pytest.raises(InvalidInput, match="your own account"):
        accounts.set_role("ana", "editor", actor="web:ana", by="ana")
    with pytest.raises(InvalidInput, match="your own account"):
        accounts.disable("ana", actor="web:ana", by="ana")
    with pytest.raises(InvalidInput, match="your own account"):
        accounts.delete("ana", actor="web:ana", by="ana")
    found = accounts.get("ana")
    assert found is not None
    assert (found.role, found.disabled) == ("admin", False)
    # positive control: another admin may do each of them
    assert accounts.set_role("ana", "editor", actor="web:bo", by="bo").role == "editor"
    assert accounts.disable("ana", actor="web:bo", by="bo").disabled
    accounts.delete("ana", actor="web:bo", by="bo")
    assert accounts.get("ana") is None


def test_two_admins_demoting_each_other_at_once_leave_one_admin(
    accounts: Accounts, store: Store
) -> None:
    """The last-admin rule reads, then writes: the write is gated on the admin the read counted
    on, so two writes decided from the same read (each sees the other as the
    remaining admin) cannot both land."""
    accounts.create("ana", PW, "admin", actor="pytest")
    accounts.create("bo", PW, "admin", actor="pytest")
    event = [AuditEvent(actor="pytest", action="account_role", key="")]
    # both decided while both were admins: ana demotes bo counting on ana, bo
    # demotes ana counting on bo
    assert store.accounts.update("bo", {"role": "editor"}, event, keep_admin="ana") is True
    # bo is no admin
    assert store.accounts.update("ana", {"role": "editor"}, event, keep_admin="bo") is False
    assert [(a.username, a.role) for a in accounts.list()] == [("ana", "admin"), ("bo", "editor")]
    assert store.accounts.remove("ana", event, keep_admin="bo") is False  # nothing deleted either
    assert accounts.get("ana") is not None
    # through the engine the second decision is taken again on a fresh
    # read: now it is the last admin
    with pytest.raises(Conflict, match="last enabled admin"):
        accounts.set_role("ana", "editor", actor="web:bo")
    # never re-creates an account
    assert store.accounts.update("gone", {"role": "admin"}, event) is False
    assert accounts.get("gone") is None


def _demote(
    accounts: Accounts, name: str, by: str, start: threading.Barrier, outcomes: list[str]
) -> None:
    start.wait()
    try:
        accounts.set_role(name, "viewer", actor=f"web:{by}", by=by)
        outcomes.append("done")
    except Conflict:
        outcomes.append("refused")


def test_racing_demotions_never_leave_the_platform_without_an_admin(accounts: Accounts) -> None:
    accounts.create("ana", PW, "admin", actor="pytest")
    accounts.create("bo", PW, "admin", actor="pytest")
    for _ in range(10):
        start = threading.Barrier(2)
        outcomes: list[str] = []
        threads = [
            threading.Thread(target=_demote, args=(accounts, name, by, start, outcomes))
            for name, by in (("ana", "bo"), ("bo", "ana"))
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert sorted(outcomes) == ["done", "refused"]
        assert [a.role for a in accounts.list()].count("admin") == 1
        for account in accounts.list():
            accounts.set_role(account.username, "admin", actor="pytest")
