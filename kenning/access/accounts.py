"""People who log in: accounts (argon2 passwords, roles) and throttled
authentication (docs/accounts.md).

Shared by the OAuth login page (mcp_server) and the dashboard; login sessions are in
kenning.access.sessions. A role caps the scope a person can grant: viewer -> read, editor -> write,
admin
-> admin (the same scopes as `kenning token`, checked by the same dispatch code).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, get_args

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from kenning.core.clock import Clock
from kenning.core.errors import Conflict, InvalidInput, NotFound, PermissionDenied, RateLimited
from kenning.store import AccountRecord, AuditEvent, Store

Role = Literal["viewer", "editor", "admin"]
ROLES: tuple[Role, ...] = get_args(Role)
_ROLE_SCOPE: dict[str, str] = {"viewer": "read", "editor": "write", "admin": "admin"}

USERNAME_RE = re.compile(r"^[a-z0-9][a-z0-9._@-]{0,63}$")
USERNAME_RULE = (
    "1-64 characters: lower-case letters, digits, '.', '_', '@', '-', "
    "starting with a letter or digit"
)
RESERVED_USERNAMES = frozenset(
    {"local", "anonymous", "unknown", "maintenance", "system", "worker", "kenning"}
)
PASSWORD_MIN, PASSWORD_MAX = 10, 1024

# Throttling: failed logins per account and per client address, in fixed windows
# (kenning.store.throttle).
LOGIN_WINDOW_SECONDS = 900
LOGIN_LIMIT_PER_ACCOUNT = 5
LOGIN_LIMIT_PER_IP = 20
_WRONG = "wrong username or password"
GATE_RETRIES = 5  # re-reads when another admin changed between the read and the gated write
# a change planned from an account: its fields (None: delete it), its events, the admin it keeps
Plan = tuple[dict[str, str] | None, list[AuditEvent], str | None]


def role_scope(role: str) -> str:
    """The highest scope a person of ``role`` can grant (viewer -> read, editor
    -> write, admin -> admin)."""
    return _ROLE_SCOPE[check_role(role)]


def check_role(role: str) -> Role:
    if role not in ROLES:
        raise InvalidInput(f"unknown role {role!r}", hint=f"use one of {', '.join(ROLES)}")
    return role


def check_username(username: str) -> str:
    if not isinstance(username, str) or not USERNAME_RE.match(username):
        raise InvalidInput(f"username {username!r} is not allowed", hint=USERNAME_RULE)
    if username in RESERVED_USERNAMES:
        raise InvalidInput(
            f"username {username!r} is reserved: it would pass for Kenning's own audit actor",
            hint="use the person's name, e.g. alice",
        )
    return username


def check_password(password: str) -> str:
    if not isinstance(password, str) or not PASSWORD_MIN <= len(password) <= PASSWORD_MAX:
        raise InvalidInput(
            "the password must be 10 to 1024 characters long",
            hint="a passphrase of a few words is easy to type and hard to guess",
        )
    if not password.strip():
        raise InvalidInput("the password may not be only spaces", hint="choose a passphrase")
    return password


@dataclass(frozen=True)
class Account:
    """An account as shown to people and doors: never the password hash."""

    username: str
    role: Role
    disabled: bool
    created_at: float
    sessions_since: float = (
        0.0  # a login session created before this is dead (kenning.access.sessions)
    )
    revision: int = 0  # raised by every change: what a person's form decided from (``seen``)


def _public(record: AccountRecord) -> Account:
    # a hand-edited hash never widens access
    role = record.role if record.role in ROLES else "viewer"
    return Account(
        record.username,
        role,
        record.disabled,
        record.created_at,
        record.sessions_since,
        record.revision,
    )


class Accounts:
    """Needs only the store and a clock, so `kenning user` works without loading the model."""

    def __init__(self, store: Store, clock: Clock, *, hasher: PasswordHasher | None = None) -> None:
        self.audit_log = store
        self.clock = clock
        self.store = store.accounts
        self.throttle = store.throttle
        self.hasher = hasher or PasswordHasher()
        self._dummy = self.hasher.hash("kenning-dummy-password")  # equal work for unknown usernames

    def _event(self, actor: str, action: str, details: dict[str, str]) -> AuditEvent:
        return AuditEvent(
            actor=actor or "unknown", action=action, key="", at=self.clock.now(), details=details
        )

    def _audit(self, actor: str, action: str, details: dict[str, str]) -> None:
        """An event that records no write (a refused login)."""
        self.audit_log.record([self._event(actor, action, details)])

    def _record(self, username: str) -> AccountRecord:
        record = self.store.get(check_username(username))
        if record is None:
            raise NotFound(
                f"no account named {username!r}", hint="`kenning user list` shows the accounts"
            )
        return record

    def create(self, username: str, password: str, role: str, *, actor: str = "system") -> Account:
        username, role = check_username(username), check_role(role)
        record = AccountRecord(
            username=username,
            role=role,
            disabled=False,
            created_at=self.clock.now(),
            password_hash=self.hasher.hash(check_password(password)),
        )
        if not self.store.add(
            record, [self._event(actor, "account_create", {"username": username, "role": role})]
        ):
            raise Conflict(f"an account named {username!r} exists", hint="choose another username")
        return _public(record)

    def get(self, username: str) -> Account | None:
        record = self.store.get(check_username(username))
        return None if record is None else _public(record)

    def list(self) -> list[Account]:
        records = (self.store.get(name) for name in self.store.usernames())
        return [_public(r) for r in records if r is not None]

    def set_password(
        self, username: str, password: str, *, actor: str = "system", seen: int | None = None
    ) -> Account:
        """A new password; the account's login sessions from before it stop working. ``seen``
        (every change takes it): the revision the caller decided from, e.g. the one a page
        showed; the change is refused when the account has changed since."""
        hashed = self.hasher.hash(check_password(password))  # once: argon2 is slow on purpose

        def plan(record: AccountRecord) -> Plan:
            fields = {"password": hashed, "sessions_since": repr(self.clock.now())}
            event = self._event(actor, "account_password", {"username": record.username})
            return fields, [event], None

        self._decide(username, plan, actor, seen)
        return _public(self._record(username))

    def set_role(
        self,
        username: str,
        role: str,
        *,
        actor: str = "system",
        by: str | None = None,
        seen: int | None = None,
    ) -> Account:
        """``by``: the signed-in account doing it (a person's door), which may not demote itself."""
        role = check_role(role)

        def plan(record: AccountRecord) -> Plan:
            details = {"username": record.username, "before": record.role, "role": role}
            events = [self._event(actor, "account_role", details)]
            if role == "admin":
                return {"role": role}, events, None
            _not_yourself(record, by, "demote")
            return {"role": role}, events, self._another_admin(record, "take the admin role from")

        self._decide(username, plan, actor, seen)
        return _public(self._record(username))

    def delete(
        self,
        username: str,
        *,
        actor: str = "system",
        by: str | None = None,
        seen: int | None = None,
    ) -> Account:
        """Remove the account; its sessions and OAuth grants stop working at their next use.
        ``by``: the signed-in account doing it, which may not delete itself."""

        def plan(record: AccountRecord) -> Plan:
            _not_yourself(record, by, "delete")
            details = {"username": record.username, "role": record.role}
            events = [self._event(actor, "account_delete", details)]
            return None, events, self._another_admin(record, "delete")

        return _public(self._decide(username, plan, actor, seen))

    def disable(
        self,
        username: str,
        *,
        actor: str = "system",
        by: str | None = None,
        seen: int | None = None,
    ) -> Account:
        """The account can no longer log in; its sessions and OAuth grants stop working at their
        next use (and stay dead when it is enabled again). ``by``: the signed-in account doing
        it, which may not disable itself."""

        def plan(record: AccountRecord) -> Plan:
            _not_yourself(record, by, "disable")
            fields = {"disabled": "1", "sessions_since": repr(self.clock.now())}
            events = [self._event(actor, "account_disable", {"username": record.username})]
            return fields, events, self._another_admin(record, "disable")

        self._decide(username, plan, actor, seen)
        return _public(self._record(username))

    def enable(self, username: str, *, actor: str = "system", seen: int | None = None) -> Account:
        def plan(record: AccountRecord) -> Plan:
            events = [self._event(actor, "account_enable", {"username": record.username})]
            return {"disabled": "0"}, events, None

        self._decide(username, plan, actor, seen)
        return _public(self._record(username))

    def _another_admin(self, record: AccountRecord, doing: str) -> str | None:
        """An enabled admin other than ``record`` whose standing the write is gated on (None:
        ``record`` is no enabled admin, so nothing to keep); refuses to leave no enabled admin
        (nobody could manage accounts from the dashboard again)."""
        if record.role != "admin" or record.disabled:
            return None
        others = [
            a
            for a in self.list()
            if a.role == "admin" and not a.disabled and a.username != record.username
        ]
        if not others:
            raise Conflict(
                f"cannot {doing} {record.username!r}: it is the last enabled admin account",
                hint="make another account an admin first",
            )
        return others[0].username

    def _decide(
        self,
        username: str,
        plan: Callable[[AccountRecord], Plan],
        actor: str,
        seen: int | None = None,
    ) -> AccountRecord:
        """Plan a change from the account as read now and commit it in one unit gated on the
        account's revision (and on the admin the plan counted on still being one): an account
        changed or deleted meanwhile gets ``Conflict`` saying what changed, nothing written. When
        only that other admin changed, read again and decide again (the rule may now refuse)."""
        for _ in range(GATE_RETRIES):
            record = self._record(username)
            if seen is not None and record.revision != seen:
                raise Conflict(
                    since(record), hint="look at the account as it is now and decide again"
                )
            fields, events, keep = plan(record)
            at = record.revision
            if fields is None:
                done = self.store.remove(record.username, events, keep_admin=keep, revision=at)
            else:
                mark = {"revision": str(at + 1), "changed_by": actor or "unknown"}
                fields = {**fields, **mark}
                done = self.store.update(
                    record.username, fields, events, keep_admin=keep, revision=at
                )
            if done:
                return record
            now = self.store.get(record.username)
            if now is None or now.revision != record.revision:
                raise Conflict(changed(record, now), hint="look at the account and decide again")
        raise Conflict(
            f"the accounts changed while changing {username!r}; nothing was written",
            hint="look at the accounts and try again",
        )

    def authenticate(self, username: str, password: str, *, ip: str) -> Account:
        """The account for a correct username and password, else PermissionDenied (the same
        message for an unknown user, a wrong password and a disabled account) or
        RateLimited once throttled."""
        now = self.clock.now()
        name = username.strip().lower() if isinstance(username, str) else ""
        self._check_throttle(name, ip, now)
        record = self.store.get(name) if USERNAME_RE.match(name) else None
        if not self._verify(record, password if isinstance(password, str) else ""):
            self._failed(
                name,
                ip,
                now,
                "disabled" if record is not None and record.disabled else "credentials",
            )
            raise PermissionDenied(
                _WRONG,
                hint="check the username and password; "
                "an administrator can reset it with `kenning user passwd`",
            )
        assert record is not None  # _verify is False without a record
        self.throttle.clear("login-user", name, now=now, window_seconds=LOGIN_WINDOW_SECONDS)
        if self.hasher.check_needs_rehash(record.password_hash):
            self.store.rehash(name, self.hasher.hash(password))
        return _public(record)

    def _verify(self, record: AccountRecord | None, password: str) -> bool:
        try:
            ok = self.hasher.verify(
                record.password_hash if record else self._dummy, password[:PASSWORD_MAX]
            )
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False
        return ok and record is not None and not record.disabled

    def _check_throttle(self, name: str, ip: str, now: float) -> None:
        per_user = self.throttle.count(
            "login-user", name, now=now, window_seconds=LOGIN_WINDOW_SECONDS
        )
        per_ip = self.throttle.count("login-ip", ip, now=now, window_seconds=LOGIN_WINDOW_SECONDS)
        if per_user >= LOGIN_LIMIT_PER_ACCOUNT or per_ip >= LOGIN_LIMIT_PER_IP:
            refused = self.throttle.hit(
                "login-refused", ip, now=now, window_seconds=LOGIN_WINDOW_SECONDS
            )
            # one event per address and window: a flood must not flood the audit stream
            if refused == 1:
                self._audit(f"ip:{ip}", "login_throttled", {"username": name[:64], "ip": ip})
            retry = int(LOGIN_WINDOW_SECONDS - now % LOGIN_WINDOW_SECONDS) // 60 + 1
            raise RateLimited("too many failed logins", hint=f"try again in about {retry} minutes")

    def _failed(self, name: str, ip: str, now: float, reason: str) -> None:
        self.throttle.hit("login-user", name, now=now, window_seconds=LOGIN_WINDOW_SECONDS)
        self.throttle.hit("login-ip", ip, now=now, window_seconds=LOGIN_WINDOW_SECONDS)
        self._audit(f"ip:{ip}", "login_failed", {"username": name[:64], "ip": ip, "reason": reason})


def changed(was: AccountRecord, now: AccountRecord | None) -> str:
    """What another change did to an account since ``was`` was read (a Conflict's message)."""
    if now is None:
        return f"account {was.username!r} was deleted meanwhile; nothing was written"
    moved = [
        f"{name} {before} -> {after}"
        for name, before, after in (
            ("role", was.role, now.role),
            ("state", _state(was), _state(now)),
        )
        if before != after
    ]
    if now.password_hash != was.password_hash and now.sessions_since != was.sessions_since:
        moved.append("password reset")
    elif now.sessions_since != was.sessions_since:
        moved.append("its sessions ended")
    what = ", ".join(moved) or "changed and changed back"
    return (
        f"account {was.username!r} was changed meanwhile by {now.changed_by or 'someone'} "
        f"({what}); nothing was written"
    )


def since(now: AccountRecord) -> str:
    """An account changed since the caller saw it (a Conflict's message)."""
    return (
        f"account {now.username!r} was changed since you saw it, by {now.changed_by or 'someone'} "
        f"(it is now {now.role}, {_state(now)}); nothing was written"
    )


def _state(record: AccountRecord) -> str:
    return "disabled" if record.disabled else "enabled"


def _not_yourself(record: AccountRecord, by: str | None, doing: str) -> None:
    """A signed-in person cannot lock themselves out: another admin demotes,
    disables or deletes them."""
    if by is not None and by == record.username:
        raise InvalidInput(f"you cannot {doing} your own account", hint="another admin can do it")
