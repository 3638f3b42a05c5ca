"""The graveyard: approaches that were tried and abandoned, found by name
(docs/lifecycle.md#graveyard).

Each abandoned approach is indexed under its normalised name
(``kenning.language.phrases.normalise``) in a
Valkey phrase index, written when the experience is recorded. ``warn(query)`` looks up every word
and phrase of the query in one round trip -- no scan of the store -- so it runs on every recall,
before embedding, in any process. Matching is by whole word/phrase: "go" warns for "rewrite it in
Go" and never for "google".

Warnings are global across projects (a dead end in one project is worth knowing in another); each
names the project and the memory that recorded it. Entries whose memory has been forgotten are
dropped when met; entries whose memory is archived are skipped.

API for other components (briefing, dashboard): ``Graveyard.warn(query)``,
``Graveyard.all(project)``; recall sends the look-up in its own pipeline and passes the reply
to ``Graveyard.warnings``.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from kenning.core.models import Memory, iso
from kenning.language import phrases
from kenning.runtime.context import Context
from kenning.store import Op

APPROACH_TYPES: tuple[str, ...] = ("library", "approach", "tool", "pattern", "service")


@dataclass(frozen=True)
class Abandoned:
    """One abandoned approach and the memory that recorded it."""

    name: str
    type: str
    reason: str
    effort: int
    key: str
    project: str
    at: float

    @property
    def normalised(self) -> str:
        return phrases.normalise(self.name)

    def public(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "reason": self.reason,
            "effort": self.effort,
            "memory": self.key,
            "project": self.project,
            "recorded_at": iso(self.at),
        }


class Graveyard:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.index = ctx.store.graveyard

    def add(self, entry: Abandoned) -> None:
        self.index.add(entry.normalised, entry.key, json.dumps(asdict(entry), sort_keys=True))

    def adding(self, entry: Abandoned) -> list[Op]:
        """``add`` as writes of the unit that records the abandonment (kenning.store.unit)."""
        return self.index.adding(
            entry.normalised, entry.key, json.dumps(asdict(entry), sort_keys=True)
        )

    def removing(self, key: str, names: list[str] | tuple[str, ...]) -> list[Op]:
        """``remove`` as writes of a unit."""
        return [op for name in names for op in self.index.removing(phrases.normalise(name), key)]

    def warn(self, text: str) -> list[Abandoned]:
        """Abandoned approaches named in ``text`` (whole words/phrases), most effortful first."""
        return self.warnings(self.index.lookup(phrases.ngrams(text)))

    def warnings(self, found: dict[str, dict[str, str]]) -> list[Abandoned]:
        """``warn`` from a look-up already made (``self.index.lookup``, or its queued
        form in a shared pipeline)."""
        return self._live([e for entries in found.values() for e in _decode(entries)])

    def all(self, project: str | None = None, *, limit: int = 200) -> list[Abandoned]:
        """Every live entry (of one project when given), most effortful first, at most ``limit``."""
        entries: list[Abandoned] = []
        for name in self.index.phrases():
            entries += [
                e
                for e in _decode(self.index.entries(name))
                if project is None or e.project == project
            ]
        return self._live(entries)[:limit]

    def _live(self, entries: list[Abandoned]) -> list[Abandoned]:
        """The entries whose memory still exists and is not archived; each memory is read once."""
        out: list[Abandoned] = []
        memories: dict[str, Memory | None] = {}
        for entry in entries:
            if entry.key not in memories:
                memories[entry.key] = self.ctx.store.memories.read(entry.key)
            memory = memories[entry.key]
            if memory is None:
                # forgotten elsewhere: clean up lazily
                self.index.remove(entry.normalised, entry.key)
            elif memory.state != "archived":
                out.append(entry)
        out.sort(key=lambda e: (-e.effort, -e.at))
        return out


def _decode(entries: dict[str, str]) -> list[Abandoned]:
    return [Abandoned(**json.loads(payload)) for payload in entries.values()]
