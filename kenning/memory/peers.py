"""Reading another memory server's store as it lies on disk (`kenning import --from PEER PATH`;
docs/migration.md). Each reader turns the peer's records into the JSON Lines rows `kenning import`
takes (``imports.FIELDS``), so a migration goes through the same checks, dry run, duplicate check,
credentials check, report and audit as any import. Nothing of the peer's store is changed: SQLite
databases are opened read-only.

Every row says where it came from: ``source`` is ``<peer>:<where in the store>`` and the tag
``from:<peer>`` marks it; the peer's own time becomes ``valid_from`` (when it was believed), the
peer's kinds and categories become tags, and its relations become memories of their own
("Dana owns shop-api"), since Kenning links memories by meaning rather than by a graph.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from kenning.core.errors import InvalidInput

Row = dict[str, Any]
EPISODIC = {"decision", "bugfix", "bug", "fix", "feature", "refactor", "change", "discovery",
            "lesson", "learning", "error", "incident", "experience"}  # fmt: skip
TAG_CHARS = re.compile(r"[^a-z0-9._:/+#-]+")
PROJECT_CHARS = re.compile(r"[^a-z0-9._-]+")


def _tag(value: object) -> str:
    return TAG_CHARS.sub("-", str(value).strip().lower()).strip("-._:/+#")[:100]


def _tags(peer: str, values: Iterator[object] | list[Any] | tuple[Any, ...]) -> list[str]:
    out = [f"from:{peer}"]
    for value in values:
        tag = _tag(value)
        if tag and tag not in out:
            out.append(tag)
    return out[:20]


def _project(value: object) -> str | None:
    name = PROJECT_CHARS.sub("-", str(value or "").strip().lower()).strip("-._")[:64]
    return name or None


def _when(value: object) -> str | None:
    """A peer's time (epoch seconds or milliseconds, or ISO 8601) as ISO 8601 UTC."""
    if value in (None, ""):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        return datetime.fromtimestamp(seconds, tz=UTC).isoformat()
    text = str(value).strip().replace("Z", "+00:00")
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).isoformat()


def _row(peer: str, content: str, where: str, **fields: Any) -> Row:
    row: Row = {"content": content.strip(), "source": f"{peer}:{where}"[:2_000]}
    row.update({k: v for k, v in fields.items() if v not in (None, "", [])})
    return row


def _namespace(kind: object) -> str:
    kind = str(kind or "").lower()
    if kind in EPISODIC:
        return "episodic"
    return "preference" if kind.startswith("prefer") else "knowledge"


def _sqlite(path: Path) -> sqlite3.Connection:
    if not path.is_file():
        raise InvalidInput(f"{path} is not a file", hint="name the peer's SQLite database file")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        conn.row_factory = sqlite3.Row
        conn.execute("SELECT name FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        raise InvalidInput(f"{path} is not a SQLite database ({exc})") from exc
    return conn


def _table(conn: sqlite3.Connection, name: str, peer: str, path: Path) -> list[sqlite3.Row]:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if name not in tables:
        raise InvalidInput(
            f"{path} has no {name} table: it is not a {peer} database",
            hint=f"tables found: {', '.join(sorted(tables)) or 'none'}",
        )
    return conn.execute(f"SELECT * FROM {name}").fetchall()  # noqa: S608 - a fixed table name


def knowledge_graph(path: Path) -> list[Row]:
    """@modelcontextprotocol/server-memory: ``memory.jsonl`` (or the older ``memory.json``), one
    entity ``{type, name, entityType, observations}`` or relation ``{type, from, to, relationType}``
    per line."""
    peer = "mcp-server-memory"
    rows: list[Row] = []
    for number, line in enumerate(_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{path} line {number} is not JSON ({exc.msg})") from exc
        if item.get("type") == "entity":
            name, kind = str(item.get("name", "")), item.get("entityType", "")
            for i, observation in enumerate(item.get("observations") or []):
                text = str(observation)
                content = text if name.lower() in text.lower() else f"{name}: {text}"
                tags = _tags(peer, [kind, f"entity:{name}"])
                rows.append(_row(peer, content, f"entity/{name}#{i}", tags=tags))
        elif item.get("type") == "relation":
            content = f"{item.get('from')} {item.get('relationType')} {item.get('to')}"
            rows.append(_row(peer, content, f"relation/{content}", tags=_tags(peer, ["relation"])))
    return rows


def memory_service(path: Path) -> list[Row]:
    """mcp-memory-service (sqlite-vec backend): the ``memories`` table (``content``, comma-separated
    ``tags``, ``memory_type``, ``metadata`` JSON, ``created_at`` epoch, ``deleted_at``)."""
    peer = "mcp-memory-service"
    rows: list[Row] = []
    with _sqlite(path) as conn:
        for record in _table(conn, "memories", peer, path):
            keys = record.keys()
            if "deleted_at" in keys and record["deleted_at"] is not None:
                continue
            tags = [t for t in str(record["tags"] or "").split(",") if t.strip()]
            kind = record["memory_type"] if "memory_type" in keys else None
            created = record["created_at"] if "created_at" in keys else None
            rows.append(
                _row(
                    peer,
                    str(record["content"]),
                    f"memories/{record['content_hash']}",
                    namespace=_namespace(kind),
                    tags=_tags(peer, [*([kind] if kind else []), *tags]),
                    valid_from=_when(created),
                )
            )
    return rows


def claude_mem(path: Path) -> list[Row]:
    """claude-mem: ``~/.claude-mem/claude-mem.db``; each ``observations`` row (type, title,
    narrative or text, concepts, project, created_at_epoch) and each session summary's ``learned``
    and ``completed``. Raw prompts and transcripts are not imported."""
    peer = "claude-mem"
    rows: list[Row] = []
    with _sqlite(path) as conn:
        for record in _table(conn, "observations", peer, path):
            keys = record.keys()
            title = record["title"] if "title" in keys else None
            body = (record["narrative"] if "narrative" in keys else None) or record["text"] or ""
            content = f"{title}: {body}" if title and body else (title or body)
            concepts = _json_list(record["concepts"]) if "concepts" in keys else []
            rows.append(
                _row(
                    peer,
                    str(content),
                    f"observations/{record['id']}",
                    namespace=_namespace(record["type"]),
                    project=_project(record["project"]),
                    tags=_tags(peer, [record["type"], *concepts]),
                    valid_from=_when(record["created_at_epoch"]),
                )
            )
        for record in _table(conn, "session_summaries", peer, path):
            for part in ("learned", "completed"):
                if record[part]:
                    rows.append(
                        _row(
                            peer,
                            str(record[part]),
                            f"session_summaries/{record['id']}/{part}",
                            namespace="episodic",
                            project=_project(record["project"]),
                            tags=_tags(peer, ["session-summary", part]),
                            valid_from=_when(record["created_at_epoch"]),
                        )
                    )
    return rows


OBSERVATION = re.compile(r"^\s*[-*]\s*\[(?P<category>[^\]]+)\]\s*(?P<text>.+?)\s*$")
RELATION = re.compile(r"^\s*[-*]\s*(?P<kind>[\w -]+?)\s*\[\[(?P<target>[^\]]+)\]\]")
HASHTAG = re.compile(r"(?<!\S)#([\w-]+)")


def basic_memory(path: Path) -> list[Row]:
    """basic-memory: a folder of Markdown notes with YAML front matter (title, type, tags,
    permalink); each ``- [category] text #tag`` observation and ``- relation [[Target]]`` relation
    of a note becomes a memory; a note without observations becomes one memory of its body."""
    peer = "basic-memory"
    if not path.is_dir():
        raise InvalidInput(f"{path} is not a folder", hint="name the basic-memory project folder")
    rows: list[Row] = []
    for note in sorted(path.rglob("*.md")):
        meta, body = _front_matter(note)
        title = str(meta.get("title") or note.stem)
        where = str(meta.get("permalink") or note.relative_to(path).with_suffix(""))
        base = [meta.get("type", "note"), *(_json_list(meta.get("tags")) or [])]
        found = 0
        for line in body.splitlines():
            if match := OBSERVATION.match(line):
                text = HASHTAG.sub("", match["text"]).strip()
                tags = _tags(peer, [*base, match["category"], *HASHTAG.findall(match["text"])])
                rows.append(_row(peer, f"{title}: {text}", f"{where}#{found}", tags=tags))
                found += 1
            elif match := RELATION.match(line):
                content = f"{title} {match['kind'].strip()} {match['target']}"
                rows.append(_row(peer, content, f"{where}#{found}", tags=_tags(peer, ["relation"])))
                found += 1
        if not found and body.strip():
            rows.append(_row(peer, f"{title}\n\n{body.strip()}", where, tags=_tags(peer, base)))
    return rows


def mem0(path: Path) -> list[Row]:
    """mem0: the JSON of ``Memory.get_all()`` (``{"results": [{id, memory, metadata, categories,
    user_id, created_at, updated_at}]}``, or the bare list) as its users export it."""
    peer = "mem0"
    try:
        data = json.loads(_text(path))
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{path} is not JSON ({exc.msg})", hint="export with get_all()") from exc
    items = data.get("results", data.get("memories")) if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise InvalidInput(f"{path} holds no list of memories", hint='{"results": [...]} expected')
    rows: list[Row] = []
    for item in items:
        if not isinstance(item, dict) or not item.get("memory"):
            continue
        categories = _json_list(item.get("categories")) or _json_list(
            (item.get("metadata") or {}).get("categories")
        )
        user = [f"user:{item['user_id']}"] if item.get("user_id") else []
        preference = any("prefer" in str(c).lower() for c in categories)
        rows.append(
            _row(
                peer,
                str(item["memory"]),
                f"memories/{item.get('id', len(rows))}",
                namespace="preference" if preference else "knowledge",
                tags=_tags(peer, [*categories, *user]),
                valid_from=_when(item.get("created_at")),
            )
        )
    return rows


def _text(path: Path) -> str:
    if not path.is_file():
        raise InvalidInput(f"{path} is not a file", hint="name the peer's export file")
    return path.read_text(encoding="utf-8")


def _json_list(value: object) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            parsed = json.loads(value)
        except json.JSONDecodeError:
            return []
        return parsed if isinstance(parsed, list) else []
    if isinstance(value, str) and value.strip():
        return [v for v in re.split(r"[,\s]+", value) if v]
    return []


def _front_matter(note: Path) -> tuple[dict[str, Any], str]:
    text = note.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}, text
    head, _, body = text[3:].partition("\n---")
    try:
        meta = yaml.safe_load(head) or {}
    except yaml.YAMLError as exc:
        raise InvalidInput(f"{note}: its front matter is not YAML ({exc})") from exc
    return (meta if isinstance(meta, dict) else {}), body.lstrip("-\n")


READERS: dict[str, Callable[[Path], list[Row]]] = {
    "mcp-server-memory": knowledge_graph,
    "mcp-memory-service": memory_service,
    "claude-mem": claude_mem,
    "basic-memory": basic_memory,
    "mem0": mem0,
}


def read(peer: str, path: Path) -> bytes:
    """The peer's store at ``path`` as the JSON Lines `kenning import` reads."""
    reader = READERS.get(peer)
    if reader is None:
        raise InvalidInput(f"unknown source {peer!r}", hint=f"one of: {', '.join(READERS)}")
    rows = reader(path)
    if not rows:
        raise InvalidInput(f"{path} holds no memories that {peer} stores")
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode("utf-8")
