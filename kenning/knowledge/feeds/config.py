"""feeds.yml: the feeds to ingest, validated entry by entry. Pure apart from reading the file.

A bad entry is reported with its line and left out (that feed is disabled, its error visible); it
never stops the other feeds or the worker. A file that is not YAML at all yields no feeds and one
problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from kenning.core import validation
from kenning.core.errors import InvalidInput, KenningError

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
NAME_RULE = (
    "1-64 characters: a-z, 0-9, '_', '-', starting with a letter or digit (e.g. 'python-news')"
)
Mode = Literal["excerpt", "summary", "digest"]


class Feed(BaseModel):
    """One feed. ``summary`` and ``digest`` need the LLM extras; until then: the excerpt."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="unique name; the audit actor is feed:<name>")
    url: str = Field(description="http(s) URL of the RSS or Atom document")
    topics: tuple[str, ...] = Field(default=(), description="tags every article carries")
    project: str | None = Field(default=None, description="the articles' project; unset = global")
    interval_minutes: float = Field(default=360.0, ge=5, le=10_080, description="how often")
    mode: Mode = "excerpt"
    enabled: bool = True
    retention_days: int | None = Field(
        default=90, ge=1, le=36_500, description="articles expire this long after; null = never"
    )

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not NAME_RE.match(value):
            raise ValueError(f"name {value!r} is not allowed: {NAME_RULE}")
        return value

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"url {value!r} must be an http:// or https:// URL with a host")
        return value.strip()

    @field_validator("topics", mode="before")
    @classmethod
    def _topics(cls, value: Any) -> tuple[str, ...]:
        items = [value] if isinstance(value, str) else list(value or ())
        try:
            return validation.tags([str(item) for item in items])
        except InvalidInput as exc:
            raise ValueError(str(exc)) from None

    @field_validator("project")
    @classmethod
    def _project(cls, value: str | None) -> str | None:
        try:
            return None if value is None else validation.project(value)
        except InvalidInput as exc:
            raise ValueError(str(exc)) from None


@dataclass(frozen=True)
class Problem:
    """Why an entry (or the whole file) was left out; ``name`` when the entry had a readable one."""

    line: int
    message: str
    name: str | None = None

    def __str__(self) -> str:
        who = f" (feed {self.name})" if self.name else ""
        return f"line {self.line}{who}: {self.message}"


@dataclass(frozen=True)
class FeedBook:
    """What a feeds.yml holds: the valid feeds (enabled or not) and every problem found."""

    feeds: tuple[Feed, ...] = ()
    problems: tuple[Problem, ...] = ()

    def get(self, name: str) -> Feed | None:
        return next((feed for feed in self.feeds if feed.name == name), None)

    def problem_of(self, name: str) -> Problem | None:
        return next((p for p in self.problems if p.name == name), None)


def load(path: Path) -> FeedBook:
    """The feeds in ``path``; a missing file is an empty book (no feeds configured)."""
    try:
        source = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return FeedBook()
    except OSError as exc:
        return FeedBook(problems=(Problem(0, f"cannot read {path}: {exc}"),))
    return parse(source)


def parse(source: str) -> FeedBook:
    """Validate every entry of a feeds.yml text (``feeds:`` followed by a list of mappings)."""
    try:
        root = yaml.compose(source, Loader=yaml.SafeLoader)
        data = yaml.safe_load(source)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 0
        why = getattr(exc, "problem", exc)
        return FeedBook(problems=(Problem(line, f"not valid YAML: {why}"),))
    if root is None:
        return FeedBook()
    entries = _entries(root, data)
    if isinstance(entries, Problem):
        return FeedBook(problems=(entries,))
    return _validated(entries)


def _entries(root: yaml.Node, data: Any) -> list[tuple[int, Any]] | Problem:
    """(line, raw entry) pairs under the top-level ``feeds:`` key."""
    if not isinstance(root, yaml.MappingNode) or not isinstance(data, dict) or "feeds" not in data:
        return Problem(root.start_mark.line + 1, "the file must be a mapping with a `feeds:` list")
    node = next(v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == "feeds")
    if data["feeds"] is None:
        return []
    if not isinstance(node, yaml.SequenceNode) or not isinstance(data["feeds"], list):
        return Problem(
            node.start_mark.line + 1, "`feeds:` must be a list of feeds (each item starts with '-')"
        )
    items = zip(node.value, data["feeds"], strict=True)
    return [(item.start_mark.line + 1, raw) for item, raw in items]


def _validated(entries: list[tuple[int, Any]]) -> FeedBook:
    feeds: list[Feed] = []
    problems: list[Problem] = []
    for line, raw in entries:
        name = raw.get("name") if isinstance(raw, dict) else None
        name = name if isinstance(name, str) else None
        try:
            feed = Feed.model_validate(raw)
        except ValidationError as exc:
            problems.append(Problem(line, first_error(exc), name))
            continue
        if any(f.name == feed.name for f in feeds):
            problems.append(Problem(line, f"the name {feed.name!r} is used by an earlier feed"))
            continue
        feeds.append(feed)
    return FeedBook(tuple(feeds), tuple(problems))


def first_error(exc: ValidationError) -> str:
    """One readable sentence per error: ``field: message``."""
    parts = []
    for error in exc.errors():
        where = ".".join(str(p) for p in error["loc"]) or "entry"
        message = str(error["msg"]).removeprefix("Value error, ")
        parts.append(f"{where}: {message}")
    return "; ".join(parts)


def entry_text(feed: Feed) -> str:
    """The YAML of one feed as `kenning feeds add` appends it (defaults left out)."""
    data = feed.model_dump(exclude_defaults=True, mode="json")
    data = {"name": feed.name, "url": feed.url, **data}
    body = yaml.safe_dump([data], sort_keys=False, default_flow_style=False, allow_unicode=True)
    return "".join(f"  {line}\n" for line in body.splitlines())


def append(path: Path, feed: Feed) -> None:
    """Add ``feed`` at the end of the file (created with a `feeds:` list when missing), keeping its
    comments."""
    book = load(path)
    if book.get(feed.name) is not None or book.problem_of(feed.name) is not None:
        raise InvalidInput(
            f"a feed named {feed.name!r} exists in {path}", hint="choose another name"
        )
    current = path.read_text(encoding="utf-8") if path.exists() else "feeds:\n"
    if current.strip() in ("", "feeds:", "feeds: []"):
        current = "feeds:\n"
    if not current.endswith("\n"):
        current += "\n"
    updated = current + entry_text(feed)
    if parse(updated).get(feed.name) != feed:
        raise KenningError(
            f"{path} is not a plain `feeds:` list; add the feed by hand", hint=entry_text(feed)
        )
    _write(path, updated)


def disable(path: Path, name: str) -> None:
    """Set ``enabled: false`` on the feed called ``name``, editing only that entry's lines."""
    source = path.read_text(encoding="utf-8") if path.exists() else ""
    root = yaml.compose(source, Loader=yaml.SafeLoader) if source.strip() else None
    item = _item_node(root, name)
    if item is None:
        raise InvalidInput(
            f"no feed named {name!r} in {path}", hint="`kenning feeds list` shows the names"
        )
    lines = source.splitlines(keepends=True)
    enabled = next((v for k, v in item.value if k.value == "enabled"), None)
    if enabled is not None:
        row = lines[enabled.start_mark.line]
        lines[enabled.start_mark.line] = (
            row[: enabled.start_mark.column] + "false" + row[enabled.end_mark.column :]
        )
    else:  # right below the one-line `name:` (the end of the whole entry is harder to place)
        key, value = next((k, v) for k, v in item.value if k.value == "name")
        row = value.end_mark.line
        lines[row] = lines[row] if lines[row].endswith("\n") else lines[row] + "\n"
        lines.insert(row + 1, " " * key.start_mark.column + "enabled: false\n")
    _write(path, "".join(lines))


def _item_node(root: yaml.Node | None, name: str) -> yaml.MappingNode | None:
    if not isinstance(root, yaml.MappingNode):
        return None
    feeds = next((v for k, v in root.value if k.value == "feeds"), None)
    if not isinstance(feeds, yaml.SequenceNode):
        return None
    for item in feeds.value:
        if isinstance(item, yaml.MappingNode) and any(
            k.value == "name" and isinstance(v, yaml.ScalarNode) and v.value == name
            for k, v in item.value
        ):
            return item
    return None


def _write(path: Path, text: str) -> None:
    """Write through a temporary file and rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)
