"""Field-level updates of memory hashes that never resurrect a deleted memory. One key per script.

``patch`` sets and removes fields in one atomic step on one key (cluster-safe, no read-modify-write
race with a concurrent writer); ``apply`` runs a bulk change (patches, deletions and their audit events)
in one pipeline. A recall's usage counters are not written here: they live beside the hash
(``kenning.store.recalls``), because every write to an indexed hash re-indexes the whole document.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import valkey

from kenning.store.audit import AuditEvent, AuditLog
from kenning.store.client import call

PATCH_SCRIPT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local n = tonumber(ARGV[1])
if n > 0 then redis.call('HSET', KEYS[1], unpack(ARGV, 2, 1 + 2 * n)) end
for i = 2 + 2 * n, #ARGV do redis.call('HDEL', KEYS[1], ARGV[i]) end
return 1
"""


@dataclass(frozen=True)
class Patch:
    """Fields to set (already encoded) and fields to remove on one existing memory hash."""

    key: str
    set: dict[str, str] = field(default_factory=dict)
    remove: tuple[str, ...] = ()

    def args(self) -> list[str]:
        flat = [str(len(self.set))]
        for name, value in self.set.items():
            flat += [name, value]
        return flat + list(self.remove)


class Patcher:
    def __init__(self, client: valkey.Valkey, audit: AuditLog) -> None:
        self.client = client
        self.audit = audit

    def patch(self, change: Patch) -> bool:
        """Apply one patch; False when the memory no longer exists (nothing is created)."""
        return bool(call(self.client.eval, PATCH_SCRIPT, 1, change.key, *change.args()))

    def apply(self, patches: list[Patch], deletes: list[str], events: list[AuditEvent]) -> None:
        """One pipelined bulk change: patches, deletions and an audit event for each; then the history links."""
        pipe = self.client.pipeline(transaction=False)
        for change in patches:
            pipe.eval(PATCH_SCRIPT, 1, change.key, *change.args())
        for key in deletes:  # one key per command: cluster-safe
            pipe.delete(key)
        if deletes:  # a deleted memory's usage counter goes with it (kenning.store.recalls imports this module)
            from kenning.store.recalls import Recalls

            Recalls(self.client, self.audit.prefix).queue_forget(pipe, deletes)
        self.audit.queue(pipe, events)
        replies = call(pipe.execute)
        self.audit.link(events, replies[len(replies) - len(events):])
