"""Idempotent create calls other than ``remember`` (backups, ...): a caller's idempotency key makes
a retry safe (docs/reliability.md, "Duplicates and retries").

``once`` runs a create call at most once per (call, caller, key): a retry with the same key gets
the first call's reply (kept a day), a call with the same key while the first is running waits for
its reply, and reusing a key for a different request is refused (``Conflict``). A first call that
failed releases the key, so the retry runs it. ``remember`` has its own, stronger form
(kenning.memory.idempotency: the memory's key is derived from the idempotency key, so a commit
whose reply was lost is found again).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, TypeVar

from kenning.core import validation
from kenning.core.errors import Conflict
from kenning.runtime.context import Context

REPLY_SECONDS = 86_400
T = TypeVar("T")
checked = validation.idempotency_key


def once(
    ctx: Context,
    call: str,
    actor: str,
    key: str,
    request: str,
    write: Callable[[], T],
    *,
    public: Callable[[T], dict[str, Any]],
    load: Callable[[dict[str, Any]], T],
    pending_seconds: float = 30.0,
    final: Callable[[T], bool] = lambda _: True,
) -> T:
    """``write()`` once for this key (see the module docstring); ``request`` fingerprints what
    was asked, ``public``/``load`` turn the reply into JSON and back; ``pending_seconds`` bounds
    how long a call in progress holds the key (longer than the call takes). A result that is
    not ``final`` (e.g. an import stopped part-way) is returned but not kept: the retry runs."""
    digest = hashlib.sha256(f"{call}\0{actor}\0{checked(key)}".encode()).hexdigest()
    replies = ctx.store.replies
    for _ in range(2):  # a second round when the call in progress failed and released the key
        if replies.claim(digest, pending_seconds=pending_seconds):
            try:
                result = write()
            except BaseException:
                replies.release(digest)
                raise
            if not final(result):
                replies.release(digest)
                return result
            replies.keep(
                digest, {"request": request, "result": public(result)}, ttl_seconds=REPLY_SECONDS
            )
            return result
        stored = replies.reply(digest, wait_seconds=pending_seconds)
        if stored is not None:
            if stored.get("request") != request:
                raise Conflict(
                    f"this idempotency key was used for a different {call} request",
                    hint=f"use a new idempotency key for each new {call}; nothing was done",
                )
            return load(stored["result"])
    raise Conflict(
        f"a {call} with this idempotency key is still in progress", hint="retry with the same key"
    )
