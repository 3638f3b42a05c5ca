"""`kenning backup` and `kenning restore FILE` (docs/backup.md), with a progress bar on stderr."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TextIO

from kenning.core.errors import InvalidInput
from kenning.core.settings import Settings
from kenning_cli.registry import command

BAR_WIDTH = 30


class Bar:
    """A one-line text progress bar: ``backup [#######.......]  350/1000``. Redrawn in place."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, label: str, done: int, total: int) -> None:
        filled = BAR_WIDTH if total == 0 else BAR_WIDTH * done // total
        self.stream.write(
            f"\r{label:<8}[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {done:>7}/{total}"
        )
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()


def _backup_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--vectors", action="store_true", help="include the vectors (bigger file, no re-embedding)"
    )
    parser.add_argument("--label", help="appended to the file name, e.g. before-upgrade")
    parser.add_argument(
        "--idempotency-key",
        metavar="KEY",
        help=(
            "your id for this backup (e.g. nightly-2026-12-03): run again with the same KEY "
            "and options within a day, it names the file the first run wrote instead of another"
        ),
    )


@command(
    "backup",
    "Write a JSON backup (memories, suppressions, contradictions) to the backup directory.",
    _backup_arguments,
)
def _backup(args: argparse.Namespace, settings: Settings) -> int:
    from kenning_cli.services import open_engine

    result = open_engine(settings).backups.backup(
        vectors=args.vectors,
        label=args.label,
        actor="cli:backup",
        progress=Bar(sys.stderr),
        idempotency_key=args.idempotency_key,
    )
    print(
        f"wrote {result.path} ({result.memories} memories, {result.suppressions} suppressions, "
        f"{result.contradictions} contradictions, {result.bytes:,} bytes)"
    )
    return 0


def _restore_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file", type=Path, help="a backup file (a path, or a name in the backup directory)"
    )
    parser.add_argument(
        "--apply", action="store_true", help="write the changes (default: only report the plan)"
    )
    parser.add_argument("--json", action="store_true", help="print the full plan as JSON")


@command(
    "restore",
    "Restore a backup: report the plan (add/update/skip and why), then --apply it.",
    _restore_arguments,
)
def _restore(args: argparse.Namespace, settings: Settings) -> int:
    from kenning.store import self_check_line
    from kenning_cli.services import open_engine

    engine = open_engine(settings)
    path = args.file if args.file.exists() else engine.backups.path_of(str(args.file))
    report = engine.backups.restore(
        path, dry_run=not args.apply, actor="cli:restore", progress=Bar(sys.stderr)
    )
    if args.json:
        print(json.dumps(report.public(), indent=2, sort_keys=True))
    for kind, counts in (
        ("memories", report.memories),
        ("suppressions", report.suppressions),
        ("contradictions", report.contradictions),
    ):
        print(f"{kind}: add {counts['add']}, update {counts['update']}, skip {counts['skip']}")
    print(f"vectors: {report.vectors}")
    if not args.apply:
        print("dry run: nothing was written; run again with --apply to restore")
        return 0
    print("applied")
    print(self_check_line(report.self_check))
    return 0  # applied: a memory left unreachable is said on the line (and by doctor)


def _export_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="where to write the JSON Lines export, or - for stdout")


@command(
    "export",
    "Write every memory as JSON Lines (kenning import's fields plus the full record): lossless "
    "with kenning import --from kenning.",
    _export_arguments,
)
def _export(args: argparse.Namespace, settings: Settings) -> int:
    from kenning_cli.services import open_engine

    backups = open_engine(settings).backups
    if args.file == "-":
        count = backups.export(sys.stdout)
    else:
        path = Path(args.file)
        if path.exists():
            raise InvalidInput(f"{path} exists", hint="name a new file; an export never overwrites")
        partial = path.with_name(path.name + ".partial")
        try:
            with os.fdopen(
                os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w"
            ) as out:
                count = backups.export(out)
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
        partial.replace(path)
    print(f"exported {count} memories", file=sys.stderr)
    return 0
