"""Idempotent create calls: a caller's idempotency key makes a retry safe (docs/reliability.md).

A write can commit and still reach its caller as an outage (the reply was lost, or a later step
failed). Retrying with the same idempotency key then returns the first call's reply, or, when the
first call committed without keeping its reply, the memory it wrote: the new memory's key is derived
from the caller and the idempotency key, so a committed first attempt is found by that key. Two
calls with the same key at once run the write once; the second returns the first one's reply.
A key names one request: reusing it for different content is refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass

from ulid import ULID

from kenning.core.errors import Conflict
from kenning.core.models import Note, RememberResult
from kenning.runtime.context import Context
from kenning.runtime.once import checked

REPLY_DAYS = 1
# longer than any one remember takes; a crashed caller's marker expires after it
PENDING_SECONDS = 30.0


@dataclass(frozen=True)
class Once:
    """One idempotency key of one caller for one request (a fingerprint of what is written)."""

    ctx: Context
    actor: str
    key: str
    request: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(f"{self.actor}\0{checked(self.key)}".encode()).hexdigest()

    @property
    def ulid(self) -> str:
        """The id of the memory this call writes: the same for every retry."""
        return str(ULID.from_bytes(bytes.fromhex(self.digest)[:16]))

    def run(
        self, write: Callable[[], RememberResult], committed: Callable[[], RememberResult | None]
    ) -> RememberResult:
        """``write`` once for this key; a retry gets the stored reply, or ``committed()`` when the
        first attempt wrote without keeping its reply."""
        replies = self.ctx.store.replies
        for _ in range(2):  # a second round when the call in progress failed and released the key
            if replies.claim(self.digest, pending_seconds=PENDING_SECONDS):
                try:
                    result = committed() or write()
                except BaseException:
                    replies.release(self.digest)
                    raise
                reply = {"request": self.request, "result": result.public()}
                replies.keep(self.digest, reply, ttl_seconds=REPLY_DAYS * 86_400)
                return result
            stored = replies.reply(self.digest, wait_seconds=PENDING_SECONDS)
            if stored is not None:
                return self._replayed(stored)
        raise Conflict(
            "a call with this idempotency key is still in progress", hint="retry with the same key"
        )

    def _replayed(self, stored: dict[str, object]) -> RememberResult:
        if stored.get("request") != self.request:
            raise Conflict(
                "this idempotency key was used for a different request",
                hint="use a new idempotency key for each new memory",
            )
        raw = stored["result"]
        assert isinstance(raw, dict)
        similarity = raw.get("similarity")
        return RememberResult(
            str(raw["status"]),
            str(raw["key"]),
            None if similarity is None else float(similarity),
            tuple(Note.parse(n) for n in raw.get("notes", ())),
        )
