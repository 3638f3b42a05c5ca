"""The engine's error hierarchy. Each front door translates these in exactly one place."""

from __future__ import annotations

# A caller's value is quoted to QUOTE characters, and no message or hint grows past MESSAGE: an
# error is read by an agent (its context), written to the server log and shown on a page, so a
# 4 MB argument must not come back 4 MB long (docs/reliability.md, "Bounded echoes").
QUOTE = 200
MESSAGE = 800


def quote(value: object, limit: int = QUOTE) -> str:
    """A caller's value for an error message: its repr, cut to ``limit`` characters, with its
    length said when it was cut."""
    shown = repr(value)
    if len(shown) <= limit:
        return shown
    size = len(value) if isinstance(value, str | bytes) else len(shown)
    return f"{shown[:limit]}… ({size:,} characters)"


def bounded(text: str, limit: int = MESSAGE) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was (the safety net behind
    ``quote``, applied to every engine error)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (cut; {len(text):,} characters in all)"


class KenningError(Exception):
    """Base of every error the engine raises on purpose. Message and hint are ``bounded``."""

    code = "error"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        message = bounded(message)
        super().__init__(message)
        self.message = message
        self.hint = None if hint is None else bounded(hint)

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class InvalidInput(KenningError):
    """The caller sent something outside the documented limits; ``hint`` says what is allowed."""

    code = "invalid_input"


class NotFound(KenningError):
    """The named memory (or record) does not exist."""

    code = "not_found"


class Conflict(KenningError):
    """The request clashes with the current state (a disallowed transition, a held lock)."""

    code = "conflict"


class PermissionDenied(KenningError):
    """The caller's scope does not allow this action."""

    code = "permission_denied"


class BackendUnavailable(KenningError):
    """Valkey, the search module or the embedding model could not answer: nothing was checked."""

    code = "backend_unavailable"


class EmbeddingMismatch(KenningError):
    """The store's vectors were written by another model or dimension than the one loaded."""

    code = "embedding_mismatch"


class FeedError(KenningError):
    """A feed could not be fetched or read (refused by the SSRF guard, an HTTP error, too big,
    too slow, not a feed). ``retry_after`` is the seconds the server asked us
    to wait, when it said so."""

    code = "feed_error"

    def __init__(
        self, message: str, *, hint: str | None = None, retry_after: float | None = None
    ) -> None:
        super().__init__(message, hint=hint)
        self.retry_after = retry_after


class RateLimited(KenningError):
    """Too many attempts (logins, client registrations) in a window; ``hint`` says when to retry."""

    code = "rate_limited"


class Overloaded(KenningError):
    """More work is waiting than the server takes on (the embedding queue's bound): nothing was
    done; retry in a moment. Answered at once instead of an unbounded wait."""

    code = "overloaded"


class StoreError(KenningError):
    """Valkey (or its search module) answered, with an error: the store is
    up but refused the command.

    Not an outage (``BackendUnavailable``): the message carries what the server answered.
    """

    code = "store_error"
