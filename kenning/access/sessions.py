"""Login sessions shared by the OAuth login page and the dashboard.

A session id is 256 random bits handed to the browser (a cookie); Valkey keeps only its sha256, with
a TTL. Every read checks the account still exists and is enabled, that the session is younger than
the account and its last disable or password reset, and takes the account's current role.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

from kenning.access.accounts import Accounts, Role
from kenning.core.clock import Clock
from kenning.core.errors import InvalidInput, PermissionDenied
from kenning.store import SessionRecord, Store

MAX_TTL_SECONDS = 30 * 86400


@dataclass(frozen=True)
class Session:
    username: str
    role: Role
    csrf_token: str
    created_at: float
    expires_at: float

    def csrf_ok(self, token: str | None) -> bool:
        """Constant-time comparison of a submitted form's CSRF token with this session's."""
        return bool(token) and hmac.compare_digest(self.csrf_token, str(token))


def _digest(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8")).hexdigest()


class Sessions:
    def __init__(self, store: Store, clock: Clock, accounts: Accounts) -> None:
        self.store = store.accounts
        self.clock = clock
        self.accounts = accounts

    def create(self, username: str, *, ttl_seconds: int) -> tuple[str, Session]:
        """A new session for an enabled account: its id (give it to the browser) and the session."""
        if not 60 <= ttl_seconds <= MAX_TTL_SECONDS:
            raise InvalidInput(
                f"session lifetime {ttl_seconds}s is out of range", hint="60 s to 30 days"
            )
        account = self.accounts.get(username)
        if account is None or account.disabled:
            raise PermissionDenied(
                f"account {username!r} cannot log in", hint="it is missing or disabled"
            )
        session_id = secrets.token_urlsafe(32)
        now = self.clock.now()
        record = SessionRecord(
            username=account.username,
            csrf_token=secrets.token_urlsafe(24),
            created_at=now,
            expires_at=now + ttl_seconds,
        )
        self.store.add_session(_digest(session_id), record, ttl_seconds)
        return session_id, Session(
            account.username, account.role, record.csrf_token, now, record.expires_at
        )

    def get(self, session_id: str | None) -> Session | None:
        """The live session for an id, or None (unknown, expired, or its
        account disabled or gone)."""
        if not session_id or len(session_id) > 200:
            return None
        record = self.store.session(_digest(session_id))
        if record is None or record.expires_at <= self.clock.now():
            return None
        account = self.accounts.get(record.username)
        # disabled, reset, or a new account of the same name
        if (
            account is None
            or account.disabled
            or record.created_at < account.sessions_since
            or record.created_at < account.created_at
        ):
            return None
        return Session(
            account.username, account.role, record.csrf_token, record.created_at, record.expires_at
        )

    def destroy(self, session_id: str | None) -> bool:
        if not session_id or len(session_id) > 200:
            return False
        return self.store.remove_session(_digest(session_id))
