"""Concurrent account changes decided from the same read: exactly one applies, the others get
``Conflict`` saying what changed and write nothing (docs/reliability.md, "Account changes").

The races use the ``GateClock`` of tests/kenning/test_decisions.py: every account change reads the
account (and the admins it counts on), then reads the clock for its event, then commits; the
clock's first reading in each thread waits until every thread has read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import valkey
from argon2 import PasswordHasher

from kenning.access.accounts import Accounts
from kenning.core.errors import Conflict
from kenning.core.settings import Settings
from kenning.store import Store
from tests.conftest import NOW
from tests.kenning.test_decisions import GateClock, race, winner

PW = "correct horse battery"
FAST = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)
ACCOUNT_ACTIONS = (
    "account_role",
    "account_disable",
    "account_enable",
    "account_password",
    "account_delete",
)


@pytest.fixture
def gate() -> GateClock:
    return GateClock(NOW)


@pytest.fixture
def store(client: valkey.Valkey, settings: Settings) -> Store:
    return Store(client, settings.key_prefix)


@pytest.fixture
def accounts(store: Store, gate: GateClock) -> Accounts:
    return Accounts(store, gate, hasher=FAST)


def events_of(store: Store, username: str, since: float) -> list[tuple[str, str]]:
    """The account changes recorded for ``username`` from ``since`` on: (action, actor)."""
    return [
        (e.action, e.actor)
        for e in store.audit.recent(limit=500, since=since)
        if e.action in ACCOUNT_ACTIONS and e.details.get("username") == username
    ]


def changing(accounts: Accounts, n: int) -> Callable[[], Any]:
    """The n-th of a mix of decisions about the editor ``cy``."""
    who = f"web:admin{n}"
    mix: list[Callable[[], Any]] = [
        lambda: accounts.set_role("cy", "viewer", actor=who),
        lambda: accounts.disable("cy", actor=who),
        lambda: accounts.set_password("cy", f"a new passphrase {n}", actor=who),
        lambda: accounts.delete("cy", actor=who),
        lambda: accounts.set_role("cy", "admin", actor=who),
    ]
    return mix[n % len(mix)]


# what each winner leaves: (role, disabled), None when the account is gone
OUTCOME = {
    ("account_role", "viewer"): ("viewer", False),
    ("account_role", "admin"): ("admin", False),
    ("account_disable", ""): ("editor", True),
    ("account_password", ""): ("editor", False),
    ("account_delete", ""): None,
}


def test_parallel_mixed_changes_of_one_account_apply_exactly_one(
    accounts: Accounts, store: Store, gate: GateClock
) -> None:
    accounts.create("ana", PW, "admin", actor="pytest")
    for round_ in range(3):
        gate.advance(60)
        accounts.create("cy", PW, "editor", actor="pytest")
        hash_before = store.accounts.get("cy").password_hash  # type: ignore[union-attr]
        results = race(gate, [changing(accounts, n + round_) for n in range(8)])
        winner(results)
        decided = events_of(store, "cy", gate.value)
        assert len(decided) == 1, decided  # exactly one set of events: the winner's
        ((action, actor),) = decided
        for lost in results:
            if isinstance(lost, Conflict):
                said = str(lost)
                assert "nothing was written" in said
                if action == "account_delete":
                    assert "account 'cy' was deleted meanwhile" in said
                else:
                    assert f"account 'cy' was changed meanwhile by {actor}" in said
        record = store.accounts.get("cy")
        role = next(
            (e.details.get("role", "") for e in store.audit.recent(action=action, limit=1)), ""
        )
        expected = OUTCOME[(action, role if action == "account_role" else "")]
        assert (None if record is None else (record.role, record.disabled)) == expected
        if record is not None:
            assert (record.password_hash != hash_before) == (action == "account_password")
            assert record.revision == 1
            accounts.delete("cy", actor="pytest")


def test_two_admins_demoting_each_other_at_once_leave_exactly_one_admin(
    accounts: Accounts, store: Store, gate: GateClock
) -> None:
    accounts.create("ana", PW, "admin", actor="pytest")
    accounts.create("bo", PW, "admin", actor="pytest")
    for round_ in range(3):
        gate.advance(60)
        results = race(
            gate,
            [
                lambda: accounts.set_role("bo", "editor", actor="web:ana", by="ana"),
                lambda: accounts.set_role("ana", "editor", actor="web:bo", by="bo"),
                lambda: accounts.disable("bo", actor="web:ana", by="ana"),
                lambda: accounts.delete("ana", actor="web:bo", by="bo"),
            ][round_ % 2 :],
        )
        admins = [a.username for a in accounts.list() if a.role == "admin" and not a.disabled]
        assert len(admins) == 1, (round_, results)
        winner(results)
        refused = [str(r) for r in results if isinstance(r, Conflict)]
        assert all("last enabled admin" in r or "meanwhile" in r for r in refused), refused
        decided = [c for name in ("ana", "bo") for c in events_of(store, name, gate.value)]
        assert len(decided) == 1, decided
        # put both admins back for the next round
        (left,) = admins
        other = "bo" if left == "ana" else "ana"
        if accounts.get(other) is None:
            accounts.create(other, PW, "admin", actor="pytest")
        else:
            accounts.enable(other, actor="pytest")
            accounts.set_role(other, "admin", actor="pytest")


def test_a_change_decided_from_an_older_revision_writes_nothing(
    accounts: Accounts, store: Store, gate: GateClock
) -> None:
    accounts.create("ana", PW, "admin", actor="pytest")
    shown = accounts.create("cy", PW, "editor", actor="pytest")  # what a page showed
    accounts.set_role("cy", "viewer", actor="web:bo")
    with pytest.raises(Conflict, match="was changed since you saw it, by web:bo"):
        accounts.delete("cy", actor="web:ana", seen=shown.revision)
    assert accounts.get("cy") is not None
    assert events_of(store, "cy", gate.value) == [("account_role", "web:bo")]
    # the positive control: decided from the account as it is now, it applies
    current = accounts.get("cy")
    assert current is not None
    accounts.delete("cy", actor="web:ana", seen=current.revision)
    assert accounts.get("cy") is None
