"""The search graph's self-check after a rebuild (issue 41; docs/operations.md, "Self-check").

``GraphSelfCheck.run`` searches every stored memory by its own vector at the recall's depth
(``KENNING_EF_RUNTIME``), re-inserts the ones the graph does not reach and searches them again
(kenning.store.graph_check). It runs at the end of ``kenning restore --apply``, of ``kenning
reindex`` and of an index migration at start-up, and alone as ``kenning reindex --check``. The
result is kept as the last ``graph_check`` report (``kenning doctor`` shows it); a repair that
re-inserted memories is audited as one summary event (``repair_graph``), not one per memory: the
memories themselves are unchanged (only their graph nodes are rebuilt), but for a missed identical
copy of another memory's vector (written before the store spread every vector), whose vector is
written spread (``spread`` in the event: a move of 1e-3 of its length; kenning.store.vectors).
"""

from __future__ import annotations

from typing import Any

from kenning.runtime.context import Context
from kenning.store import GraphCheck

REPORT = "graph_check"


class GraphSelfCheck:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def run(self, *, actor: str, repair: bool = True, index: str | None = None) -> GraphCheck:
        """Check (and ``repair``) the live memory index (or ``index``); keeps and returns the
        result."""
        done = self.ctx.store.check_graph(
            index or self.ctx.index,
            ef=self.ctx.settings.ef_runtime,
            now=self.ctx.clock.now(),
            repair=repair,
        )
        kept = done.public()
        self.ctx.store.reports.save(REPORT, kept)
        if done.reinserted:
            details = {k: v for k, v in kept.items() if k != "missed_keys"}
            self.ctx.audit(actor, "repair_graph", "", details=details)
        return done

    def last(self) -> dict[str, Any] | None:
        """The last self-check's result, as kept; None before a first one."""
        return self.ctx.store.reports.load(REPORT)
