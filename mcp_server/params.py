"""The tools' parameter vocabulary: one line of description per parameter name, the closed sets
and bounds as types, and the engine's own limits in the schema, so ``tools/list`` tells an agent
what to send without guessing, in as few words as that takes.

``Registry.add`` gives a parameter the description ``DESCRIPTIONS`` holds for its name unless the
tool's signature carries its own (``Annotated[..., Field(description=...)]``, for a name that means
something else in that tool). A name in ``CONVENTIONS`` carries no description of its own: the
server instructions (mcp_server/instructions.md) say once what it means for every tool, instead of
every schema repeating it. Closed sets are ``Literal`` types, so the schema shows an ``enum`` and
the call is validated against it; lengths and patterns come from kenning/core/validation.py (one
source: the schema states what the engine enforces). tests/mcp_server/test_params.py checks them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import Field

from kenning.core import validation as v

Namespace = Literal["episodic", "knowledge", "preference", "project", "skill"]
State = Literal["active", "deprioritised", "archived"]
Outcome = Literal["succeeded", "pivoted", "abandoned"]
Decision = Literal["keep_a", "keep_b", "both_valid", "not_a_contradiction", "merge"]
ContradictionStatus = Literal["open", "resolved", "closed", "all"]
ApproachType = Literal["library", "approach", "tool", "pattern", "service"]

EFFORT = "1 trivial to 5 very hard; 4 or more also suppresses the name in recall"
Effort = Annotated[int, Field(ge=1, le=5, description=EFFORT)]
TopK = Annotated[int, Field(ge=1, le=50)]
Offset = Annotated[int, Field(ge=0, le=100_000)]
# The engine's limits, stated in the schema (json_schema_extra: the schema says them, the engine
# checks them, with its own message and a hint how to fix the input, e.g. "use remember_document"
# for a text over the limit). The engine lower-cases a project name or tag before its allowlist
# check, so the pattern admits upper case too.
Project = Annotated[
    str,
    Field(
        json_schema_extra={"pattern": v.name_pattern(v.PROJECT_CHARS, v.MAX_PROJECT, upper=True)}
    ),
]
Tag = Annotated[
    str,
    Field(json_schema_extra={"pattern": v.name_pattern(v.TAG_CHARS, v.MAX_TAG_LEN, upper=True)}),
]
Tags = Annotated[list[Tag], Field(json_schema_extra={"maxItems": v.MAX_TAGS})]
Content = Annotated[str, Field(json_schema_extra={"minLength": 1, "maxLength": v.MAX_CONTENT})]
Query = Annotated[str, Field(json_schema_extra={"minLength": 1, "maxLength": v.MAX_QUERY})]
Title = Annotated[str, Field(json_schema_extra={"maxLength": v.MAX_TITLE})]
Source = Annotated[str, Field(json_schema_extra={"maxLength": v.MAX_SOURCE})]
# A parameter kept for older callers and left out of tools/list (Registry.add drops it).
ALIAS = "kenning/alias"


def alias_of(name: str) -> Any:
    """``Field`` metadata of a parameter accepted for older callers, listed as ``name``."""
    return Field(json_schema_extra={ALIAS: name})


# Parameters whose meaning the server instructions state once ("Conventions"), for every tool.
CONVENTIONS = frozenset(
    {
        "key",
        "keys",
        "project",
        "projects",
        "tags",
        "content",
        "query",
        "reason",
        "title",
        "event_date",
        "expires_at",
        "namespace",
        "namespaces",
        "top_k",
        "limit",
        "offset",
        "outcome",
    }
)

DESCRIPTIONS: dict[str, str] = {
    "abandoned_approaches": "approaches given up; they enter the graveyard",
    "action": "only events of this action, e.g. remember, forget",
    "actor": "only events by this token name",
    "add": "tags to add",
    "allow_duplicate": "store even if a near-duplicate exists",
    "as_of": "ISO time: what was believed then",
    "before": "the `next` value of the previous page",
    "budget_tokens": "most tokens to return; least important lists are cut first",
    "breakthrough": "what made it work",
    "confirm": "true acts; false previews",
    "context": "more detail for the memory",
    "conventions": "the project's conventions",
    "decision": (
        "keep_a/keep_b supersede the other side; both_valid needs a note; merge needs content"
    ),
    "descending": "newest (largest) first",
    "description": "what the project is",
    "domain": "the skill's domain: a tag, e.g. postgres",
    "dry_run": "true only reports what would change",
    "effort": EFFORT,
    "file": "backup file name, from list_backups",
    "gotchas": "traps",
    "id": "contradiction id, from list_contradictions",
    "include_deprioritised": "also lowered memories",
    "idempotency_key": "your id for this call; a retry returns the first result",
    "include_feeds": "false leaves out feed articles",
    "include_superseded": "also ones a contradiction went against",
    "iterations": "attempts it took",
    "keep": "key of the memory to keep",
    "label": "a name for the backup file",
    "mode": "propose stores a proposal for review; preview only shows it",
    "name": "name",
    "note": "why, kept in the audit",
    "others": "keys to archive as duplicates of keep",
    "overlap": "characters repeated between fixed chunks",
    "preview": "true only shows what would be hidden",
    "proposal_id": "id of a skill proposal, from compile_skill",
    "refresh": "a repeat moves the existing one's event_date on",
    "reinstate_hints": "words that bring it back when a query names them",
    "remove": "tags to remove",
    "sha": "the sha of the proposal you reviewed",
    "since": "ISO time: only events from then on",
    "size": "characters per chunk",
    "sort": "field to sort by",
    "source": "where it came from",
    "stack": "languages, frameworks and tools",
    "state": "current state of the work, free text",
    "states": "only memories in these states",
    "status": "which records",
    "strategy": "how to split the text",
    "term": "word or phrase",
    "text": "the document's text",
    "threshold": "similarity 0.5-1.0 (default: the duplicate threshold)",
    "topic": "word or phrase the answer mentioned",
    "type": "kind of approach",
    "valid_from": "ISO time it became true",
    "vectors": "include the vectors (larger file, faster restore)",
}


def plain(values: Sequence[str] | None) -> list[str] | None:
    """A list of plain strings (the engine's type) from a list of a closed set's values."""
    return None if values is None else list(values)


def said(name: str, text: str) -> bool:
    """Whether a tool's description already names parameter ``name`` (as a word)."""
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", text) is not None


def describe(properties: dict[str, dict[str, Any]], tool_description: str = "") -> None:
    """Give each schema property without a description the vocabulary's line for its name,
    unless it is one of the ``CONVENTIONS`` or the tool's own description names it (said once,
    not twice), and drop what an agent need not read: an optional parameter's ``null`` branch
    and ``default: null`` (leaving it out means the same, and the call still accepts null)."""
    for name, schema in properties.items():
        if (
            "description" not in schema
            and name in DESCRIPTIONS
            and not said(name, tool_description)
        ):
            schema["description"] = DESCRIPTIONS[name]
        branches = schema.get("anyOf")
        if (
            schema.get("default", 0) is None
            and isinstance(branches, list)
            and {"type": "null"} in branches
        ):
            kept = [b for b in branches if b != {"type": "null"}]
            del schema["anyOf"], schema["default"]
            if len(kept) == 1:
                schema.update(kept[0])
            else:
                schema["anyOf"] = kept
