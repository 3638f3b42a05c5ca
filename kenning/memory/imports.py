"""Importing memories from JSON Lines (`kenning import`; docs/memory-model.md, "Importing a file").

One line, one memory: a JSON object with the fields of the MCP ``remember`` tool (``FIELDS``). The
whole input is read and every line checked -- its JSON, its fields and their types, then remember's
own validation -- before anything is written: one bad line and nothing is, and every bad line is
named. Then the lines go through ``Bulk`` (batched, deduplicated against the store and the earlier
lines, audited); a dry run asks ``Bulk`` what it would do and writes nothing.

``kind`` and the other ``Draft`` fields are not importable: memories of the other kinds (experience,
chunks, facts, project context, skills) are written by their own paths, which keep what they need.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, BinaryIO

from kenning.core import validation
from kenning.core.errors import InvalidInput, KenningError
from kenning.core.models import RememberResult
from kenning.memory.bulk import FAILED, NEW, UNKNOWN, Bulk, ImportInterrupted, Progress
from kenning.memory.memories import Draft
from kenning.runtime.context import Context
from kenning.runtime.once import once

MB = 1024 * 1024
PENDING_SECONDS = 3_600.0  # how long an import in progress holds its idempotency key
EXPORTED = "kenning"
BOM = b"\xef\xbb\xbf"
TEXT, OPTIONAL_TEXT, TAGS = "a string", "a string or null", "a list of strings"
DATE = "a date string or epoch seconds"
FIELDS = {
    "content": TEXT,
    "namespace": TEXT,
    "project": OPTIONAL_TEXT,
    "tags": TAGS,
    "title": OPTIONAL_TEXT,
    "source": OPTIONAL_TEXT,
    "event_date": DATE,
    "valid_from": DATE,
    "expires_at": DATE,
}
ACCEPTS: dict[str, tuple[type, ...]] = {
    TEXT: (str,),
    OPTIONAL_TEXT: (str, type(None)),
    DATE: (str, int, float, type(None)),
    TAGS: (list,),
}
EXAMPLE = (
    '{"content": "Deploy with `fly deploy` after CI is green.", "project": '
    '"atlas-api", "tags": ["deploy"]}'
)


@dataclass(frozen=True)
class Defaults:
    """What a line that does not say gets: its namespace and project; ``tags``
    are added to every line's."""

    namespace: str | None = None
    project: str | None = None
    tags: tuple[str, ...] = ()

    def check(self) -> None:
        """Refuse a bad default once (else every line that takes it would be refused for it)."""
        if self.namespace is not None:
            validation.namespace(self.namespace)
        if self.project is not None:
            validation.project(self.project)
        validation.tags(self.tags)


@dataclass(frozen=True)
class Line:
    """One memory of the input: its line number, its fields with the defaults applied (what a
    retry file holds, so it imports the same without the options), and the draft."""

    number: int
    fields: dict[str, Any]
    draft: Draft


@dataclass(frozen=True, slots=True)
class LineError:
    number: int
    message: str
    hint: str | None = None

    def public(self) -> dict[str, Any]:
        return {
            "line": self.number,
            "status": "invalid",
            "error": self.message,
            "hint": self.hint or "",
        }


class BadLines(InvalidInput):
    """Lines of an import are invalid (``errors``, in line order); nothing was written."""

    def __init__(self, errors: list[LineError], memories: int) -> None:
        super().__init__(
            f"{len(errors)} of {memories} lines are invalid; nothing was written",
            hint="fix the lines named and import the input again",
        )
        self.errors = errors


@dataclass(frozen=True, slots=True)
class Outcome:
    """What became of one line: ``stored`` / ``duplicate`` / ``failed`` (not in the store) /
    ``unknown`` (its write was sent, the store could not be read back), or ``new`` in a dry run.

    ``key``: the stored memory, or the memory a duplicate repeats (empty for a dry run's
    unwritten one); ``duplicate_of_line``: the earlier line a duplicate repeats."""

    line: int
    status: str
    key: str = ""
    similarity: float | None = None
    duplicate_of_line: int | None = None
    contradictions: tuple[str, ...] = ()  # the records the stored line opened (bulk's check)

    def public(self) -> dict[str, Any]:
        out: dict[str, Any] = {"line": self.line, "status": self.status, "key": self.key}
        if self.similarity is not None:
            out["similarity"] = round(self.similarity, 4)
        if self.contradictions:
            out["contradictions"] = list(self.contradictions)
        if self.duplicate_of_line is not None:
            out["duplicate_of_line"] = self.duplicate_of_line
        return out


@dataclass(frozen=True)
class ImportReport:
    """Every line's outcome, in order; ``stopped``: the failure that interrupted the import (its
    lines not stored are ``failed``, those it could not check ``unknown``: import them again)."""

    outcomes: list[Outcome]
    dry_run: bool
    stopped: KenningError | None = None
    replayed: bool = False  # a retry with the first import's idempotency key: nothing written

    def public(self) -> dict[str, Any]:
        """What a finished import's idempotent reply keeps (``load`` reads it back)."""
        return {"outcomes": [o.public() for o in self.outcomes], "dry_run": self.dry_run}

    @classmethod
    def load(cls, reply: dict[str, Any]) -> ImportReport:
        outcomes = [
            Outcome(
                o["line"],
                o["status"],
                o["key"],
                o.get("similarity"),
                o.get("duplicate_of_line"),
                tuple(o.get("contradictions", ())),
            )
            for o in reply["outcomes"]
        ]
        return cls(outcomes, dry_run=bool(reply["dry_run"]), replayed=True)

    @property
    def counts(self) -> dict[str, int]:
        """Lines per outcome, duplicates split by what they repeat (the
        store, or an earlier line)."""
        counts = {
            "stored": 0,
            "new": 0,
            "duplicate_of_store": 0,
            "duplicate_of_line": 0,
            "failed": 0,
            "unknown": 0,
        }
        for o in self.outcomes:
            name = (
                o.status
                if o.status != "duplicate"
                else "duplicate_of_store"
                if o.duplicate_of_line is None
                else "duplicate_of_line"
            )
            counts[name] += 1
        return counts


class Imports:
    def __init__(self, ctx: Context, bulk: Bulk) -> None:
        self.ctx = ctx
        self.bulk = bulk

    def read(self, stream: BinaryIO, defaults: Defaults, *, actor: str) -> list[Line]:
        """The input's memories, every line checked; ``BadLines`` names each invalid one. Refuses
        an input over ``KENNING_IMPORT_MAX_MB`` (read no further) or
        ``KENNING_IMPORT_MAX_LINES``."""
        actor = validation.actor(actor)
        defaults.check()
        limit = self.ctx.settings.import_max_mb * MB
        data = stream.read(limit + 1)
        if len(data) > limit:
            raise InvalidInput(
                f"the input is larger than {self.ctx.settings.import_max_mb} MiB",
                hint="split it into smaller files, or raise KENNING_IMPORT_MAX_MB",
            )
        lines, errors = parse(data, defaults, max_lines=self.ctx.settings.import_max_lines)
        memories = len(lines) + len(errors)
        errors += [
            LineError(lines[i].number, exc.message, exc.hint)
            for i, exc in self.bulk.problems([line.draft for line in lines], actor=actor)
        ]
        if errors:
            raise BadLines(sorted(errors, key=lambda e: e.number), memories)
        if not lines:
            raise InvalidInput(
                "the input holds no memories", hint=f"one JSON object per line, e.g. {EXAMPLE}"
            )
        return lines

    def run(
        self,
        lines: Sequence[Line],
        *,
        actor: str,
        dry_run: bool = False,
        source: str = "",
        progress: Progress | None = None,
        idempotency_key: str | None = None,
    ) -> ImportReport:
        """Import ``lines`` (or, ``dry_run``, report what importing them would do, writing nothing);
        ``source`` names the input in the audit event. With ``idempotency_key`` a retry of a
        finished import (same caller, key and lines) returns its report and writes nothing; a
        retry while it runs waits for it; an import stopped part-way keeps no reply, so its retry
        imports what is missing (kenning.runtime.once)."""
        actor = validation.actor(actor)
        if idempotency_key is None or dry_run:
            return self._run(lines, actor=actor, dry_run=dry_run, source=source, progress=progress)
        asked = json.dumps([line.fields for line in lines], sort_keys=True, default=str)
        return once(
            self.ctx,
            "import",
            actor,
            idempotency_key,
            hashlib.sha256(asked.encode()).hexdigest(),
            lambda: self._run(lines, actor=actor, dry_run=False, source=source, progress=progress),
            public=ImportReport.public,
            load=ImportReport.load,
            pending_seconds=PENDING_SECONDS,
            final=lambda report: report.stopped is None,
        )

    def _run(
        self,
        lines: Sequence[Line],
        *,
        actor: str,
        dry_run: bool,
        source: str,
        progress: Progress | None,
    ) -> ImportReport:
        drafts = [line.draft for line in lines]
        stopped: KenningError | None = None
        try:
            run = self.bulk.plan_many if dry_run else self.bulk.remember_many
            results = run(drafts, actor=actor, progress=progress)
        except ImportInterrupted as exc:
            results, stopped = exc.results, exc.cause
        report = ImportReport(outcomes(lines, results), dry_run=dry_run, stopped=stopped)
        if not dry_run and stopped is None:
            self.ctx.audit(actor, "import", "", details={"source": source, **report.counts})
        return report


def outcomes(lines: Sequence[Line], results: Sequence[RememberResult]) -> list[Outcome]:
    """Each line's result, a duplicate of an earlier line named by its line number."""
    # the key a line stored (or would store) -> that line's outcome
    earlier: dict[str, Outcome] = {}
    out: list[Outcome] = []
    for line, result in zip(lines, results, strict=True):
        if result.status in ("stored", NEW):
            outcome = Outcome(
                line.number,
                result.status,
                result.key if result.status == "stored" else "",
                contradictions=tuple(
                    n.contradiction for n in result.notes if n.contradiction is not None
                ),
            )
            earlier[result.key] = outcome
        elif result.status == "duplicate":
            first = earlier.get(result.key)
            outcome = Outcome(
                line.number,
                "duplicate",
                first.key if first is not None else result.key,
                result.similarity,
                first.line if first is not None else None,
            )
        else:
            outcome = Outcome(line.number, UNKNOWN if result.status == UNKNOWN else FAILED)
        out.append(outcome)
    return out


def parse(data: bytes, defaults: Defaults, *, max_lines: int) -> tuple[list[Line], list[LineError]]:
    """The lines of ``data`` (blank ones skipped, numbers counted from 1) and the errors of those
    that are not a JSON object of ``FIELDS`` with the right types. Remember's own
    validation is not run here."""
    data = data.removeprefix(BOM)
    if data.lstrip().startswith(b"["):
        raise InvalidInput(
            "the input is a JSON array, not JSON Lines",
            hint="write one object per line, e.g. `jq -c '.[]' notes.json > notes.jsonl`",
        )
    lines: list[Line] = []
    errors: list[LineError] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        if len(lines) + len(errors) == max_lines:
            raise InvalidInput(
                f"the input holds more than {max_lines:,} memories (line {number})",
                hint="split it into smaller files, or raise KENNING_IMPORT_MAX_LINES",
            )
        try:
            lines.append(_line(number, raw, defaults))
        except InvalidInput as exc:
            errors.append(LineError(number, exc.message, exc.hint))
    return lines, errors


def _line(number: int, raw: bytes, defaults: Defaults) -> Line:
    item = _object(raw)
    # `kenning export` adds the full record under "kenning" (read by `--from kenning`): a plain
    # import takes the readable fields and leaves it
    item.pop(EXPORTED, None)
    unknown = sorted(set(item) - set(FIELDS))
    if unknown:
        raise InvalidInput(
            f"unknown field(s) {', '.join(unknown)}", hint=f"the fields are {', '.join(FIELDS)}"
        )
    for name, value in item.items():
        _check_type(name, value)
    fields = dict(item)
    for name in ("namespace", "project"):
        default = getattr(defaults, name)
        if fields.get(name) is None and default is not None:
            fields[name] = default
    if defaults.tags:
        fields["tags"] = list(dict.fromkeys([*fields.get("tags", []), *defaults.tags]))
    present = {k: v for k, v in fields.items() if v is not None}
    draft = Draft(**{**present, "tags": tuple(fields.get("tags", ()))})
    return Line(number, fields, draft)


def _object(raw: bytes) -> dict[str, Any]:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            f"not UTF-8 text (byte {exc.start + 1})", hint="save the input as UTF-8"
        ) from None
    try:
        item = json.loads(text, object_pairs_hook=_no_repeats, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"not valid JSON: {exc.msg} (column {exc.colno})",
            hint=f"one JSON object per line, e.g. {EXAMPLE}",
        ) from None
    if not isinstance(item, dict):
        raise InvalidInput(f"{_json_type(item)}, not a JSON object", hint=f"write it as {EXAMPLE}")
    return item


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for name, value in pairs:
        if name in seen:
            raise InvalidInput(f"field {name} is given twice", hint="keep one")
        seen[name] = value
    return seen


def _no_constant(name: str) -> Any:
    raise InvalidInput(
        f"{name} is not a JSON value", hint="give dates as ISO 8601 strings or epoch seconds"
    )


def _check_type(name: str, value: Any) -> None:
    expected = FIELDS[name]
    if (
        isinstance(value, bool)
        or not isinstance(value, ACCEPTS[expected])
        or (isinstance(value, list) and not all(isinstance(t, str) for t in value))
    ):
        raise InvalidInput(
            f"{name} must be {expected}, not {_json_type(value)}", hint=f"e.g. {EXAMPLE}"
        )
    if not all(
        _encodable(t) for t in (value if isinstance(value, list) else [value]) if isinstance(t, str)
    ):
        raise InvalidInput(
            f"{name} holds a lone surrogate escape (\\ud800-\\udfff)",
            hint="write characters outside the BMP as UTF-8 or as an escaped surrogate pair",
        )


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _json_type(value: Any) -> str:
    if isinstance(value, list) and value and not all(isinstance(t, str) for t in value):
        return "a list holding " + next(_json_type(t) for t in value if not isinstance(t, str))
    names = {
        bool: "true/false",
        str: "a string",
        int: "a number",
        float: "a number",
        list: "a list",
        dict: "an object",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)
