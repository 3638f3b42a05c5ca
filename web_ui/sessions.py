"""Logins as the dashboard sees them: who is signed in, with which role and CSRF token.

``SessionBook`` is the seam between the door and the engine's accounts and sessions (stored in Valkey,
so a logout or an expiry holds on every dashboard process). ``Logins`` adapts the engine's
``Accounts`` and ``Sessions`` to it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

ROLES: tuple[str, ...] = ("viewer", "editor", "admin")  # each can do what the ones before it can


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
        """Whether this login holds ``role`` or a higher one."""
        return ROLES.index(self.role) >= ROLES.index(role)


class SessionBook(Protocol):
    def login(self, username: str, password: str, *, ip: str | None) -> Login | None:
        """A new login for valid credentials of an enabled account; None otherwise (never says which)."""

    def current(self, sid: str) -> Login | None:
        """The live login behind a cookie value (None when unknown, expired or the account is disabled)."""

    def logout(self, sid: str) -> None:
        """End the login on the server: the cookie value stops working everywhere."""
