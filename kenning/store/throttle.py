"""Fixed-window attempt counters (login throttling, registration rate limits).

``{prefix}throttle:{kind}:{subject}:{window}`` is an integer that expires two windows after it
starts. The window number comes from the caller's clock (so a ManualClock moves it), while the
Valkey TTL only cleans up. Subjects are hashed: an IP address or a username is not
readable from a key name.
"""

from __future__ import annotations

import hashlib
from typing import Any

import valkey

from kenning.store import layout
from kenning.store.client import call

# the count and its expiry at once (the cluster layout's MULTI)
_HIT = "local n = redis.call('INCR', KEYS[1]) redis.call('EXPIRE', KEYS[1], ARGV[1]) return n"


class Throttle:
    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.prefix = prefix

    def _key(self, kind: str, subject: str, window: int) -> str:
        hashed = hashlib.sha256(subject.encode("utf-8")).hexdigest()[:32]
        return f"{self.prefix}throttle:{kind}:{hashed}:{window}"

    def count(self, kind: str, subject: str, *, now: float, window_seconds: int) -> int:
        """Attempts recorded for ``subject`` in the current window."""
        raw = call(self.client.get, self._key(kind, subject, int(now // window_seconds)))
        return int(raw or 0)

    def hit(self, kind: str, subject: str, *, now: float, window_seconds: int) -> int:
        """Record one attempt; the window's count including it (INCR is atomic across replicas)."""
        key = self._key(kind, subject, int(now // window_seconds))
        if layout.clustered(self.client):  # a cluster client refuses MULTI: one key, one script
            return int(call(self.client.eval, _HIT, 1, key, window_seconds * 2))
        pipe: Any = self.client.pipeline(transaction=True)
        pipe.incr(key)
        pipe.expire(key, window_seconds * 2)
        count, _ = call(pipe.execute)
        return int(count)

    def clear(self, kind: str, subject: str, *, now: float, window_seconds: int) -> None:
        call(self.client.delete, self._key(kind, subject, int(now // window_seconds)))
