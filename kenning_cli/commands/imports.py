"""`kenning import FILE|-`: load memories from JSON Lines
(kenning/memory/imports.py, docs/memory-model.md).

Exit codes: 0 imported (duplicates included), 2 bad input (nothing written), 1 the import failed or
stopped part-way (the lines not stored are written to a retry file, named on stderr).
"""

from __future__ import annotations

import argparse
import getpass
import io
import json
import os
import sys
from collections.abc import Iterable
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from kenning.core.errors import InvalidInput
from kenning.core.settings import Settings
from kenning.memory import peers
from kenning.memory.imports import BadLines, Defaults, ImportReport, Line
from kenning_cli.commands.backups import Bar
from kenning_cli.registry import command

SHOWN_ERRORS = 20  # bad lines printed on stderr; --report holds them all


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        help=(
            'a JSON Lines file, one memory per line ({"content": ..., "project": '
            '..., "tags": [...]}), or - for stdin'
        ),
    )
    parser.add_argument(
        "--from",
        dest="peer",
        choices=sorted([*peers.READERS, "kenning"]),
        help=(
            "FILE is another memory server's store (its SQLite database, export or folder), "
            "read as it is on disk (docs/migration.md)"
        ),
    )
    parser.add_argument(
        "--namespace", help="the namespace of lines that do not say (default: knowledge)"
    )
    parser.add_argument("--project", help="the project of lines that do not say (default: global)")
    parser.add_argument(
        "--tag", action="append", default=[], help="add this tag to every line (repeatable)"
    )
    parser.add_argument(
        "--actor", help="who the audit names (default: cli:import:<your user name>)"
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help=(
            "check every line and report what would be stored or refused as a duplicate; "
            "write nothing"
        ),
    )
    _retries(parser)


def _retries(parser: argparse.ArgumentParser) -> None:
    """What makes an import safe to run again: its idempotency key, its report, its retry file."""
    parser.add_argument(
        "--idempotency-key",
        metavar="KEY",
        help=(
            "your id for this import (e.g. a UUID): run again with the same KEY and the same "
            "lines, it prints the first run's report and writes nothing (for a day)"
        ),
    )
    parser.add_argument("--report", type=Path, help="write each line's outcome here as JSON Lines")
    parser.add_argument(
        "--retry-file",
        type=Path,
        help=(
            "where the lines not stored go if the import stops part-way "
            "(default: FILE.failed-<time>.jsonl beside FILE, or in the current directory)"
        ),
    )


@command(
    "import",
    "Import memories from a JSON Lines file (or - for stdin): every line checked first, "
    "duplicates refused, every write audited.",
    _arguments,
)
def _import(args: argparse.Namespace, settings: Settings) -> int:
    from kenning_cli.services import open_engine

    if args.peer == "kenning":
        return _lossless(args, settings)
    try:
        _writable(args.report, args.retry_file)
        with ExitStack() as stack:
            # a missing file fails before the model loads
            source = _peer(args) if args.peer else _source(args.file, stack)
            engine = open_engine(settings)
            actor = args.actor if args.actor is not None else _default_actor()
            lines = engine.imports.read(
                source, Defaults(args.namespace, args.project, tuple(args.tag)), actor=actor
            )
        bar, label = Bar(sys.stderr), "checked" if args.dry_run else "import"
        report = engine.imports.run(
            lines,
            actor=actor,
            dry_run=args.dry_run,
            source=f"{args.peer}:{args.file}"
            if args.peer
            else "stdin"
            if args.file == "-"
            else args.file,
            progress=lambda done, total: bar(label, done, total),
            idempotency_key=args.idempotency_key,
        )
    except BadLines as exc:
        return _refused(exc, args.report)
    except InvalidInput as exc:
        print(f"kenning import: {exc}", file=sys.stderr)
        return 2
    if args.report is not None:
        _write_jsonl(args.report, (o.public() for o in report.outcomes))
    print(_summary(report))
    return _stopped(report, lines, args) if report.stopped is not None else 0


def _default_actor() -> str:
    try:
        return f"cli:import:{getpass.getuser()}"
    except OSError:  # no user name in some containers
        return "cli:import"


def _source(name: str, stack: ExitStack) -> BinaryIO:
    if name == "-":
        return sys.stdin.buffer
    path = Path(name)
    if not path.is_file():
        raise InvalidInput(
            f"{name} is not a file", hint="name a JSON Lines file, or - to read stdin"
        )
    return stack.enter_context(path.open("rb"))


def _lossless(args: argparse.Namespace, settings: Settings) -> int:
    """An export of `kenning export` restored whole (every field; merged by updated_at)."""
    from kenning_cli.services import open_engine

    path = Path(args.file)
    if not path.is_file():
        raise InvalidInput(f"{path} is not a file", hint="name a file written by kenning export")
    actor = args.actor if args.actor is not None else _default_actor()
    report = open_engine(settings).backups.import_export(
        path.read_bytes(), str(path), dry_run=args.dry_run, actor=actor
    )
    counts = ", ".join(f"{n} {action}" for action, n in report.memories.items())
    print(("dry run: would " if args.dry_run else "") + f"restore memories: {counts}")
    return 0


def _peer(args: argparse.Namespace) -> BinaryIO:
    """Another server's store as the JSON Lines this command reads (kenning.memory.peers)."""
    return io.BytesIO(peers.read(args.peer, Path(args.file)))


def _writable(*paths: Path | None) -> None:
    """Refuse an output path in a folder that is not there or not writable,
    before anything is imported."""
    for path in paths:
        if path is not None and not (path.parent.is_dir() and os.access(path.parent, os.W_OK)):
            raise InvalidInput(
                f"{path.parent} is not a writable directory",
                hint=f"create it, or write {path.name} elsewhere",
            )


def _refused(exc: BadLines, report: Path | None) -> int:
    print(f"kenning import: {exc}", file=sys.stderr)
    for error in exc.errors[:SHOWN_ERRORS]:
        print(
            f"  line {error.number}: {error.message}" + (f" ({error.hint})" if error.hint else ""),
            file=sys.stderr,
        )
    if len(exc.errors) > SHOWN_ERRORS:
        more = "; --report FILE lists them all" if report is None else f"; all are in {report}"
        print(f"  ... and {len(exc.errors) - SHOWN_ERRORS} more{more}", file=sys.stderr)
    if report is not None:
        _write_jsonl(report, (e.public() for e in exc.errors))
    return 2


def _summary(report: ImportReport) -> str:
    counts = report.counts
    duplicates = counts["duplicate_of_store"] + counts["duplicate_of_line"]
    of = (
        f"{duplicates} duplicates ({counts['duplicate_of_store']} of memories in the store, "
        f"{counts['duplicate_of_line']} of an earlier line)"
    )
    if report.dry_run:
        return f"dry run: would store {counts['new']}, {of}; nothing was written"
    unknown = f", unknown {counts['unknown']}" if counts["unknown"] else ""
    done = f"stored {counts['stored']}, {of}, failed {counts['failed']}{unknown}"
    if report.replayed:
        return f"{done} (the report of the first import with this key: nothing was written now)"
    return done


def _stopped(report: ImportReport, lines: list[Line], args: argparse.Namespace) -> int:
    """Write the lines not stored (failed, and unknown: perhaps landed) to the retry file."""
    failed = {o.line for o in report.outcomes if o.status == "failed"}
    unknown = {o.line for o in report.outcomes if o.status == "unknown"}
    path = args.retry_file or _retry_path(args.file)
    _write_jsonl(path, (line.fields for line in lines if line.number in failed | unknown))
    unchecked = (
        f", and {len(unknown)} lines whose write did not answer could not be read back (they "
        "may have landed)"
        if unknown
        else ""
    )
    print(
        f"\nkenning import: stopped: {report.stopped}\n{len(failed)} lines were not stored"
        f"{unchecked}; they are in {path}: run `kenning import {path}` once the store is back "
        "(lines that did land are reported as duplicates)",
        file=sys.stderr,
    )
    return 1


def _retry_path(source: str) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    if source == "-":
        return Path(f"kenning-import.failed-{stamp}.jsonl")
    path = Path(source)
    return path.with_name(f"{path.stem}.failed-{stamp}.jsonl")


def _write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for row in rows:
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
