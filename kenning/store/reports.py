"""The last report of each background job (e.g. maintenance), as one JSON value per job name.

Key: ``{prefix}meta:report:{name}``. The briefing reads it; the job overwrites it each run.
"""

from __future__ import annotations

import json
from typing import Any

import valkey

from kenning.store.client import call, text


class ReportStore:
    def __init__(self, client: valkey.Valkey, prefix: str) -> None:
        self.client = client
        self.prefix = prefix

    def _key(self, name: str) -> str:
        return f"{self.prefix}meta:report:{name}"

    def save(self, name: str, report: dict[str, Any]) -> None:
        call(self.client.set, self._key(name), json.dumps(report, sort_keys=True, default=str))

    def load(self, name: str) -> dict[str, Any] | None:
        raw = call(self.client.get, self._key(name))
        return None if raw is None else dict(json.loads(text(raw)))
