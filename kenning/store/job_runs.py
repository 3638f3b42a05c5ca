"""The last run of each scheduled job: one hash, ``{prefix}meta:jobs``, job
name -> JSON of that run.

Each run overwrites its job's field; reading every job's last run is one HGETALL (no scan).
"""

from __future__ import annotations

import json
from typing import Any

import valkey

from kenning.store.client import call, text


class JobRunStore:
    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.key = f"{prefix}meta:jobs"

    def save(self, job: str, run: dict[str, Any]) -> None:
        call(self.client.hset, self.key, job, json.dumps(run, sort_keys=True, default=str))

    def load_all(self) -> dict[str, dict[str, Any]]:
        raw: dict[Any, Any] = call(self.client.hgetall, self.key)
        return {text(job): dict(json.loads(text(value))) for job, value in raw.items()}
