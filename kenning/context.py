"""What every engine component shares: the store, the embedder, the settings and the clock."""

from __future__ import annotations

from dataclasses import dataclass

from kenning.clock import Clock
from kenning.embedding import Embedder
from kenning.errors import InvalidInput
from kenning.settings import Settings
from kenning.store import Store


@dataclass(frozen=True)
class Context:
    store: Store
    embedder: Embedder
    settings: Settings
    clock: Clock
    indexes: dict[str, str]

    def index(self, namespace: str) -> str:
        try:
            return self.indexes[namespace]
        except KeyError:
            raise InvalidInput(f"unknown namespace {namespace!r}") from None
