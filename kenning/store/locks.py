"""Leases: one key held by one owner for a bounded time, so two processes never
do the same work at once.

A lease is taken with ``SET key owner NX PX ttl`` and renewed or released only by its owner, through
a compare-and-set script on that one key (cluster-safe: no multi-key transaction). An owner that
dies simply stops renewing; the key expires and another owner can take it.
"""

from __future__ import annotations

from typing import Any

import valkey

from kenning.store.client import call, text

# Renew (PEXPIRE) or release (DEL) only when the key still names us: a lease that expired and was
# taken by another owner must never be extended or deleted by the old one.
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""


class Lease:
    """A lease on ``key`` for ``owner``; every method raises BackendUnavailable
    when Valkey cannot answer."""

    def __init__(self, client: valkey.Valkey, key: str, owner: str, ttl_seconds: float) -> None:
        self.client = client
        self.key = key
        self.owner = owner
        self.ttl_ms = max(1, round(ttl_seconds * 1000))

    def hold(self) -> bool:
        """Take the lease when it is free, renew it when it is ours; False
        when another owner holds it."""
        if call(self.client.set, self.key, self.owner, nx=True, px=self.ttl_ms):
            return True
        return bool(call(self.client.eval, _RENEW, 1, self.key, self.owner, self.ttl_ms))

    def release(self) -> bool:
        """Give the lease up if it is still ours (True), so another owner
        need not wait for the expiry."""
        return bool(call(self.client.eval, _RELEASE, 1, self.key, self.owner))

    def queue_take(self, pipe: Any) -> None:
        """Queue the take of a free lease (SET NX PX) on ``pipe``: its reply is
        truthy when it was taken."""
        pipe.set(self.key, self.owner, nx=True, px=self.ttl_ms)

    def queue_release(self, pipe: Any) -> None:
        """Queue ``release`` on ``pipe`` (e.g. behind the write the lease
        guarded, in the same round trip)."""
        pipe.execute_command("EVAL", _RELEASE, 1, self.key, self.owner)

    def holder(self) -> str | None:
        """The current owner, or None when nobody holds the lease."""
        raw = call(self.client.get, self.key)
        return None if raw is None else text(raw)
