"""`kenning maintain` and `kenning reindex`: truth maintenance from the command line.

``reindex`` rebuilds the memory index and ends with the graph's self-check (every memory searched
by its own vector, the missed ones re-inserted: docs/operations.md); ``reindex --check`` runs the
self-check alone and exits 1 when a memory stays unreachable after the repair (the rebuild says so
on its line and exits 0: it did its work; `kenning doctor` fails until a check passes).

``maintain`` runs one maintenance pass (docs/truth-maintenance.md) and prints its report as JSON. It
is the same engine call the worker's scheduler makes (``Engine.maintenance.run``, docs/worker.md),
for a run on demand or from cron where no worker runs.
"""

from __future__ import annotations

import argparse
import json

from kenning.core.settings import Settings
from kenning_cli.registry import command


def _maintain_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--summary", action="store_true", help="print counts only, not the full JSON report"
    )


@command(
    "maintain",
    "Run one maintenance pass: expiry, duplicate review, contradiction re-check, index drift.",
    _maintain_arguments,
)
def _maintain(args: argparse.Namespace, settings: Settings) -> int:
    from kenning_cli.services import open_engine

    report = open_engine(settings).maintenance.run(actor="cli:maintain")
    if args.summary:
        print(
            f"expired: {report.expired.count}; duplicate clusters: {report.duplicates.clusters} "
            f"(merged {len(report.duplicates.merged)}); contradictions closed: "
            f"{len(report.contradictions.closed)} of {report.contradictions.examined} open; "
            f"index drift: {len(report.indexes.drift)}; phantoms: {report.indexes.phantoms}"
        )
    else:
        print(json.dumps(report.public(), indent=2, sort_keys=True))
    return 0


def _reindex_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--check",
        action="store_true",
        help="rebuild nothing: search every memory by its own vector in the live index and "
        "re-insert the ones it misses (the self-check a reindex and a restore end with)",
    )


@command(
    "reindex",
    "Rebuild the memory search index safely (new index, backfill, swap, drop old), then "
    "self-check it; --check runs the self-check alone.",
    _reindex_arguments,
)
def _reindex(args: argparse.Namespace, settings: Settings) -> int:
    from kenning.store import self_check_line
    from kenning_cli.services import open_engine

    maintenance = open_engine(settings).maintenance
    if args.check:
        checked = maintenance.graph.run(actor="cli:reindex")
        print(checked.line())
        # the check alone fails while one is unreachable (found by no exact search either)
        return 1 if checked.unfound else 0
    result = maintenance.reindex(actor="cli:reindex")
    print(f"rebuilt {result.index} ({result.num_docs} documents, {result.num_docs_before} before)")
    print(self_check_line(result.self_check))
    return 0  # a rebuild that did its work; a memory left unreachable is said on the line
