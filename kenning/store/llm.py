"""Valkey state of the LLM extras: the daily token ledger, the enrichment
queue and the expansion cache.

Ledger: one hash per UTC day, ``{prefix}llm:usage:{YYYY-MM-DD}``, fields ``tokens``, ``calls``,
``failures``, ``tokens:project:{name}`` and ``calls:project:{name}``; HINCRBY keeps concurrent
callers exact; each day key expires after 40 days.

Queue: the stream ``{prefix}queue:enrich`` with the consumer group ``enrich``. A claimed job stays
in the group's pending list until acknowledged, so a worker that dies mid-job loses nothing: after
the visibility timeout another consumer claims it (XAUTOCLAIM). Attempts are counted per job; a job
that failed ``max_attempts`` times is parked in ``{prefix}queue:enrich:parked`` with its error. A
job the LLM could not take (an outage, an exhausted budget) waits in the sorted set
``{prefix}queue:enrich:delayed`` (score: when it is due) and returns to the stream when due, its
attempts and delays carried in the entry; a person may requeue or drop a parked job.

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


@dataclass(frozen=True, slots=True)
class QueueCounts:
    """The enrichment queue as it stands: jobs waiting, taken, delayed (and when the first is
    due), parked, and the newest parked jobs' stored fields."""

    waiting: int
    in_flight: int
    delayed: int
    next_due: float | None
    parked: int
    recent_parked: tuple[dict[str, str], ...]


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
    attempts: int  # counted failures, this claim included
    delays: int = 0  # times it waited out an outage


@dataclass(frozen=True)
class ParkedJob:
    id: str  # the parked entry's id (what requeue and drop name)
    job: str  # the job's id when it was parked
    kind: str
    payload: str
    attempts: int
    error: str


class JobQueue:
    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.stream = f"{prefix}queue:enrich"
        self.parked = f"{prefix}queue:enrich:parked"
        self.attempts = f"{prefix}queue:enrich:attempts"
        self.delayed = f"{prefix}queue:enrich:delayed"
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

    def push(
        self, kind: str, payload: dict[str, Any], *, attempts: int = 0, delays: int = 0
    ) -> str:
        self.ensure_group()
        entry = {"kind": kind, "payload": json.dumps(payload, sort_keys=True)}
        if attempts or delays:
            entry.update({"attempts": str(attempts), "delays": str(delays)})
        return text(call(self.client.xadd, self.stream, entry))

    def claim(
        self, consumer: str, *, count: int, visibility_ms: int, now: float | None = None
    ) -> list[QueuedJob]:
        """Delayed jobs now due return to the stream; then jobs left by a dead consumer (idle past
        the visibility timeout), then new ones."""
        self.ensure_group()
        if now is not None:
            self.release_due(now)
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
        return QueuedJob(
            job_id,
            decoded["kind"],
            dict(json.loads(decoded["payload"])),
            attempts + int(decoded.get("attempts") or 0),
            int(decoded.get("delays") or 0),
        )

    def delay(self, job: QueuedJob, due: float, error: str) -> None:
        """The job leaves the stream and waits until ``due``; the claim that found the LLM away
        is not counted as an attempt. (Added before it is acknowledged: a crash in between runs
        it twice, which the write path's duplicate check makes harmless.)"""
        record = {
            "kind": job.kind,
            "payload": json.dumps(job.payload, sort_keys=True),
            "attempts": job.attempts - 1,
            "delays": job.delays + 1,
            "job": job.id,
            "error": error[:300],
        }
        call(self.client.zadd, self.delayed, {json.dumps(record, sort_keys=True): due})
        self.done(job)

    def release_due(self, now: float) -> int:
        """Move the delayed jobs due by ``now`` back into the stream; how many moved. ZREM first:
        of two workers releasing at once only the one that removed an entry adds it."""
        due = call(self.client.zrangebyscore, self.delayed, "-inf", now, start=0, num=500)
        moved = 0
        for raw in due:
            if not call(self.client.zrem, self.delayed, raw):
                continue
            record = json.loads(text(raw))
            self.push(
                record["kind"],
                dict(json.loads(record["payload"])),
                attempts=int(record["attempts"]),
                delays=int(record["delays"]),
            )
            moved += 1
        return moved

    def parked_jobs(self, limit: int = 100) -> list[ParkedJob]:
        """The parked jobs, newest first, each with the error that parked it."""
        entries = call(self.client.xrevrange, self.parked, count=limit)
        return [self._parked(entry_id, fields) for entry_id, fields in entries]

    @staticmethod
    def _parked(entry_id: Any, fields: dict[Any, Any]) -> ParkedJob:
        f = {text(k): text(v) for k, v in fields.items()}
        return ParkedJob(
            text(entry_id), f.get("id", ""), f["kind"], f["payload"], int(f["attempts"]), f["error"]
        )

    def parked_job(self, parked_id: str) -> ParkedJob | None:
        entries = call(self.client.xrange, self.parked, parked_id, parked_id)
        return self._parked(*entries[0]) if entries else None

    def requeue(self, parked: ParkedJob) -> str | None:
        """Put a parked job back in the stream with its attempts reset; None when it is gone
        (another requeue or drop took it first: XDEL answers 0)."""
        if not call(self.client.xdel, self.parked, parked.id):
            return None
        return self.push(parked.kind, dict(json.loads(parked.payload)))

    def drop(self, parked: ParkedJob) -> bool:
        """Delete a parked job for good; False when it was gone already."""
        return bool(call(self.client.xdel, self.parked, parked.id))

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

    def status(self) -> QueueCounts:
        self.ensure_group()
        pending = call(self.client.xpending, self.stream, GROUP)
        parked = call(self.client.xrevrange, self.parked, count=5)
        in_flight = int(pending["pending"] if isinstance(pending, dict) else pending[0])
        first = call(self.client.zrange, self.delayed, 0, 0, withscores=True)
        return QueueCounts(
            waiting=int(call(self.client.xlen, self.stream)) - in_flight,
            in_flight=in_flight,
            delayed=int(call(self.client.zcard, self.delayed)),
            next_due=float(first[0][1]) if first else None,
            parked=int(call(self.client.xlen, self.parked)),
            recent_parked=tuple(
                {text(k): text(v) for k, v in fields.items()} for _id, fields in parked
            ),
        )


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
