"""Logins as the dashboard sees them: who is signed in, with which role and CSRF token.

``SessionBook`` is the seam between the door and the engine's accounts and sessions (stored in
Valkey, so a logout or an expiry holds on every dashboard process). ``Logins`` adapts the engine's
``Accounts`` and ``Sessions`` to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from kenning.access.accounts import ROLES, Accounts
from kenning.access.sessions import Session, Sessions
from kenning.core.errors import PermissionDenied
from kenning.core.settings import Settings
from kenning.engine import Engine

_RANK: dict[str, int] = {role: rank for rank, role in enumerate(ROLES)}


@dataclass(frozen=True)
class Login:
    """One signed-in person: ``sid`` is the cookie value, ``csrf`` the token every form carries."""

    sid: str
    username: str
    role: str
    csrf: str
    expires_at: float

    @property
    def actor(self) -> str:
        """The audit actor of everything this person does through the dashboard."""
        return f"web:{self.username}"

    def may(self, role: str) -> bool:
        """Whether this login holds ``role`` or a higher one (``ROLES`` is ordered
        viewer < editor < admin)."""
        return _RANK[self.role] >= _RANK[role]


class SessionBook(Protocol):
    accounts: Accounts  # the accounts page manages them; a login checks against them

    def login(self, username: str, password: str, *, ip: str | None) -> Login | None:
        """A new login for valid credentials of an enabled account; None
        otherwise (never says which)."""

    def current(self, sid: str) -> Login | None:
        """The live login behind a cookie value (None when unknown, expired or
        the account is disabled)."""

    def logout(self, sid: str) -> None:
        """End the login on the server: the cookie value stops working everywhere."""


class Logins:
    """``SessionBook`` over the engine's accounts and sessions (shared
    with the OAuth login page)."""

    def __init__(self, accounts: Accounts, sessions: Sessions, *, ttl_seconds: int) -> None:
        self.accounts = accounts
        self.sessions = sessions
        self.ttl_seconds = ttl_seconds

    def login(self, username: str, password: str, *, ip: str | None) -> Login | None:
        try:  # RateLimited passes: the person must hear that waiting, not retyping, is what helps
            account = self.accounts.authenticate(username, password, ip=ip or "unknown")
        except PermissionDenied:
            return None
        sid, session = self.sessions.create(account.username, ttl_seconds=self.ttl_seconds)
        return _login(sid, session)

    def current(self, sid: str) -> Login | None:
        session = self.sessions.get(sid)
        return None if session is None else _login(sid, session)

    def logout(self, sid: str) -> None:
        self.sessions.destroy(sid)


def _login(sid: str, session: Session) -> Login:
    return Login(
        sid=sid,
        username=session.username,
        role=session.role,
        csrf=session.csrf_token,
        expires_at=session.expires_at,
    )


def logins_for(engine: Engine, settings: Settings) -> Logins:
    """The dashboard's logins on the engine's store and clock."""
    accounts = Accounts(engine.store, engine.ctx.clock)
    return Logins(
        accounts,
        Sessions(engine.store, engine.ctx.clock, accounts),
        ttl_seconds=int(settings.web_session_hours * 3600),
    )
