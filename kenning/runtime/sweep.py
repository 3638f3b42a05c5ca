"""Walking every memory that matches a filter, page by page through FT.SEARCH (never SCAN).

Used by duplicates, maintenance, briefing and backup. The walk has no cap: it pages until the index
says there is nothing left, and it counts what it examined and the phantom entries it met (index
rows whose hash is gone), so callers can report both.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from kenning.core import query
from kenning.core.models import Memory
from kenning.core.schema import FIELD_NAMES
from kenning.runtime.context import Context

PAGE = 500


@dataclass
class Sweep:
    """One walk over one or more namespaces; ``examined`` and ``phantoms`` grow as it goes."""

    ctx: Context
    examined: int = 0
    phantoms: int = 0
    per_namespace: dict[str, int] = field(default_factory=dict)
    phantoms_per_namespace: dict[str, int] = field(default_factory=dict)

    def memories(
        self,
        namespaces: tuple[str, ...] | list[str],
        clauses: tuple[str, ...] = (),
        fields: tuple[str, ...] = FIELD_NAMES,
    ) -> Iterator[Memory]:
        """Every matching memory, oldest first within each namespace.

        Paging is by offset over a stable sort; callers that change what the filter matches while
        walking (e.g. archiving) collect keys first and act afterwards.
        """
        for namespace in namespaces:
            offset = 0
            while True:
                search = query.Search(
                    index=self.ctx.index,
                    namespaces=(namespace,),
                    clauses=clauses,
                    sort_by="created_at",
                    offset=offset,
                    limit=PAGE,
                    return_fields=fields,
                )
                result = self.ctx.store.memories.search(search)
                self.phantoms += result.phantoms
                self.phantoms_per_namespace[namespace] = (
                    self.phantoms_per_namespace.get(namespace, 0) + result.phantoms
                )
                self.examined += len(result.hits)
                self.per_namespace[namespace] = self.per_namespace.get(namespace, 0) + len(
                    result.hits
                )
                yield from (hit.memory for hit in result.hits)
                offset += PAGE
                if offset >= result.total:
                    break
