"""`kenning maintain` and `kenning reindex`: truth maintenance from the command line.

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


@command("reindex", "Rebuild the memory search index safely (new index, backfill, swap, drop old).")
def _reindex(args: argparse.Namespace, settings: Settings) -> int:
    from kenning_cli.services import open_engine

    result = open_engine(settings).maintenance.reindex(actor="cli:reindex")
    print(f"rebuilt {result.index} ({result.num_docs} documents, {result.num_docs_before} before)")
    return 0
