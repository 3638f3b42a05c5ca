"""Valkey state of the LLM extras: the daily token ledger, the enrichment
queue and the expansion cache.

Ledger: one hash per UTC day, ``{prefix}llm:usage:{YYYY-MM-DD}``, fields ``tokens``, ``calls``,
``failures``, ``tokens:project:{name}`` and ``calls:project:{name}``; HINCRBY keeps concurrent
callers exact; each day key expires after 40 days.

Queue: the stream ``{prefix}queue:enrich`` with the consumer group ``enrich``. A claimed job stays
in the group's pending list until acknowledged, so a worker that dies mid-job loses nothing: after
the visibility timeout another consumer claims it (XAUTOCLAIM). Attempts are counted per job; a job
that failed ``max_attempts`` times is parked in ``{prefix}queue:enrich:parked`` with its error.

Expansion cache: ``{prefix}llm:expansion:{digest}``, a JSON list of a query's rephrasings with
their vectors, the digest a hash of the LLM model, the embedding model and the normalised query;
each key expires after KENNING_QUERY_EXPANSION_CACHE_SECONDS.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import valkey
import valkey.exceptions as vx

from kenning.store.client import call, text, translate

GROUP = "enrich"
DAY_TTL_SECONDS = 40 * 86_400


class UsageLedger:
    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.prefix = prefix

    def key(self, day: str) -> str:
        return f"{self.prefix}llm:usage:{day}"

    def spent(self, day: str, project: str | None) -> tuple[int, int]:
        """(tokens spent today in all, tokens spent today by ``project``)."""
        fields = ["tokens", f"tokens:project:{project or ''}"]
        total, mine = call(self.client.hmget, self.key(day), fields)
        return int(total or 0), int(mine or 0)

    def add(self, day: str, project: str | None, tokens: int, *, failed: bool = False) -> None:
        pipe = self.client.pipeline(transaction=False)
        key = self.key(day)
        pipe.hincrby(key, "calls", 1)
        pipe.hincrby(key, f"calls:project:{project or ''}", 1)
        if failed:
            pipe.hincrby(key, "failures", 1)
        if tokens:
            pipe.hincrby(key, "tokens", tokens)
            pipe.hincrby(key, f"tokens:project:{project or ''}", tokens)
        pipe.expire(key, DAY_TTL_SECONDS)
        call(pipe.execute)

    def day(self, day: str) -> dict[str, int]:
        raw: dict[Any, Any] = call(self.client.hgetall, self.key(day))
        return {text(k): int(v) for k, v in raw.items()}

    def days(self, days: Sequence[str]) -> list[dict[str, int]]:
        """``day`` for each of ``days``, in one round trip."""
        pipe = self.client.pipeline(transaction=False)
        for day in days:
            pipe.hgetall(self.key(day))
        return [{text(k): int(v) for k, v in raw.items()} for raw in call(pipe.execute)]


@dataclass(frozen=True)
class QueuedJob:
    id: str
    kind: str
    payload: dict[str, Any]
    attempts: int


class JobQueue:
    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.stream = f"{prefix}queue:enrich"
        self.parked = f"{prefix}queue:enrich:parked"
        self.attempts = f"{prefix}queue:enrich:attempts"
        self._ready = False

    def ensure_group(self) -> None:
        if self._ready:
            return
        try:
            self.client.xgroup_create(self.stream, GROUP, id="0", mkstream=True)
        except vx.ResponseError as exc:
            if "BUSYGROUP" not in str(exc):  # BUSYGROUP: the group exists already (the common case)
                raise translate(exc) from exc
        except (vx.ValkeyError, OSError) as exc:
            raise translate(exc) from exc
        self._ready = True

    def push(self, kind: str, payload: dict[str, Any]) -> str:
        self.ensure_group()
        entry = {"kind": kind, "payload": json.dumps(payload, sort_keys=True)}
        return text(call(self.client.xadd, self.stream, entry))

    def claim(self, consumer: str, *, count: int, visibility_ms: int) -> list[QueuedJob]:
        """Jobs left by a dead consumer (idle past the visibility timeout) first, then new ones."""
        self.ensure_group()
        reply = call(
            self.client.xautoclaim, self.stream, GROUP, consumer, visibility_ms, "0-0", count=count
        )
        entries = list(reply[1])
        if len(entries) < count:
            fresh = call(
                self.client.xreadgroup,
                GROUP,
                consumer,
                {self.stream: ">"},
                count=count - len(entries),
            )
            for _stream, items in fresh or []:
                entries.extend(items)
        return [self._job(entry_id, fields) for entry_id, fields in entries if fields]

    def _job(self, entry_id: Any, fields: dict[Any, Any]) -> QueuedJob:
        decoded = {text(k): text(v) for k, v in fields.items()}
        job_id = text(entry_id)
        attempts = int(call(self.client.hincrby, self.attempts, job_id, 1))
        return QueuedJob(job_id, decoded["kind"], dict(json.loads(decoded["payload"])), attempts)

    def done(self, job: QueuedJob) -> None:
        pipe = self.client.pipeline(transaction=False)
        pipe.xack(self.stream, GROUP, job.id)
        pipe.xdel(self.stream, job.id)
        pipe.hdel(self.attempts, job.id)
        call(pipe.execute)

    def park(self, job: QueuedJob, error: str) -> None:
        """A poison job leaves the queue with its error, for a person to read
        (`kenning queue status`)."""
        record = {
            "id": job.id,
            "kind": job.kind,
            "payload": json.dumps(job.payload, sort_keys=True),
            "attempts": str(job.attempts),
            "error": error[:1000],
        }
        call(self.client.xadd, self.parked, record, maxlen=10_000, approximate=True)
        self.done(job)

    def status(self) -> dict[str, Any]:
        self.ensure_group()
        pending = call(self.client.xpending, self.stream, GROUP)
        parked = call(self.client.xrevrange, self.parked, count=5)
        in_flight = int(pending["pending"] if isinstance(pending, dict) else pending[0])
        return {
            "waiting": int(call(self.client.xlen, self.stream)) - in_flight,
            "in_flight": in_flight,
            "parked": int(call(self.client.xlen, self.parked)),
            "recent_parked": [
                {text(k): text(v) for k, v in fields.items()} for _id, fields in parked
            ],
        }


class ExpansionCache:
    """A query's phrasings and their vectors (so a cached expansion embeds nothing)."""

    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.prefix = prefix

    def key(self, models: str, query: str) -> str:
        digest = hashlib.sha256(f"{models}\0{query}".encode()).hexdigest()[:32]
        return f"{self.prefix}llm:expansion:{digest}"

    def get(self, models: str, query: str) -> list[tuple[str, bytes]] | None:
        raw = call(self.client.get, self.key(models, query))
        if raw is None:
            return None
        return [(str(p), base64.b64decode(v)) for p, v in json.loads(text(raw))]

    def put(
        self, models: str, query: str, phrasings: list[tuple[str, bytes]], ttl_seconds: int
    ) -> None:
        value = json.dumps([[p, base64.b64encode(v).decode()] for p, v in phrasings])
        call(self.client.set, self.key(models, query), value, ex=ttl_seconds)
