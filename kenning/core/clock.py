"""Time enters the engine through a clock object so tests can move it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Protocol


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since the epoch (UTC)."""
        ...


class SystemClock:
    def now(self) -> float:
        return time.time()


@dataclass
class ManualClock:
    """A clock that only moves when told to (tests, benchmarks, backfills)."""

    value: float = field(default_factory=time.time)

    def now(self) -> float:
        return self.value

    def advance(self, seconds: float) -> None:
        self.value += seconds
