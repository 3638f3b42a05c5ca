"""The tools' parameter vocabulary: one line of description per parameter name, and the closed sets
and bounds as types, so ``tools/list`` tells an agent what to send without guessing.

``Registry.tool`` gives a parameter the description ``DESCRIPTIONS`` holds for its name unless the
tool's signature carries its own (``Annotated[..., Field(description=...)]``, for a name that means
something else in that tool). Closed sets are ``Literal`` types, so the schema shows an ``enum`` and
the call is validated against it; tests/mcp_server/test_params.py checks them
against the engine's own tuples.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import Field

Namespace = Literal["episodic", "knowledge", "preference", "project", "skill"]
State = Literal["active", "deprioritised", "archived"]
Outcome = Literal["succeeded", "pivoted", "abandoned"]
Decision = Literal["keep_a", "keep_b", "both_valid", "not_a_contradiction", "merge"]
ContradictionStatus = Literal["open", "resolved", "closed", "all"]
ApproachType = Literal["library", "approach", "tool", "pattern", "service"]

EFFORT = (
    "how hard the work was: 1 trivial, 2 easy, 3 moderate, 4 hard, 5 very hard; "
    "at 4 or more an abandoned approach's name is also suppressed in recall"
)
Effort = Annotated[int, Field(ge=1, le=5, description=EFFORT)]
TopK = Annotated[int, Field(ge=1, le=50)]
Offset = Annotated[int, Field(ge=0, le=100_000)]

DESCRIPTIONS: dict[str, str] = {
    "abandoned_approaches": "approaches tried and given up; they enter the graveyard",
    "action": "only events of this action, e.g. remember, forget",
    "actor": "only events by this token name",
    "add": "tags to add",
    "allow_duplicate": "store even when a near-identical memory exists",
    "as_of": "ISO time: answer as of then (what we believed)",
    "before": "the `next` value of the previous page",
    "breakthrough": "what finally made it work",
    "confirm": "true to act; false only previews",
    "content": "the text",
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
    "event_date": "ISO date it happened",
    "expires_at": "ISO time after which maintenance archives it",
    "file": "backup file name, from list_backups",
    "gotchas": "traps worth remembering",
    "id": "contradiction id, from list_contradictions",
    "include_deprioritised": "also memories lowered in visibility",
    "idempotency_key": "your own id for this call; a retry with it returns the first result",
    "include_feeds": "false leaves out feed articles (default: KENNING_RECALL_INCLUDE_FEEDS)",
    "include_superseded": "also memories a resolved contradiction went against",
    "iterations": "attempts it took",
    "keep": "key of the memory to keep",
    "key": "memory key, e.g. kenning:mem:knowledge:01J...",
    "keys": "memory keys, up to 20",
    "label": "a name for the backup file",
    "limit": "most items to return",
    "mode": "propose stores a proposal for review; preview only shows it",
    "name": "name",
    "namespace": "memory namespace",
    "namespaces": "only these namespaces (default: all)",
    "note": "why, kept in the audit",
    "offset": "items to skip (paging)",
    "others": "keys to archive as duplicates of keep",
    "outcome": "how the work ended",
    "overlap": "characters repeated between fixed chunks",
    "preview": "true only shows what would be hidden",
    "project": "project name (lower-case); unset = global",
    "proposal_id": "id of a skill proposal, from compile_skill",
    "projects": "project names; global memories are always included",
    "query": "natural-language text to match memories by meaning",
    "reason": "why, kept in the audit",
    "refresh": "a repeat moves the existing memory's event date on instead of storing a new one",
    "reinstate_hints": "words that bring it back when a query names them",
    "remove": "tags to remove",
    "sha": "the sha of the proposal you reviewed",
    "since": "ISO time: only events from then on",
    "size": "characters per chunk",
    "sort": "field to sort by",
    "source": "where it came from (URL, file, person)",
    "stack": "languages, frameworks and tools",
    "state": "current state of the work, free text",
    "states": "only memories in these states",
    "status": "which records",
    "strategy": "how to split the text",
    "tags": "lower-case tags",
    "term": "word or phrase",
    "text": "the document's text",
    "threshold": "similarity 0.5-1.0 (default: the duplicate threshold)",
    "title": "short title",
    "top_k": "most results to return",
    "topic": "word or phrase the answer mentioned",
    "type": "kind of approach",
    "valid_from": "ISO time it became true (default now)",
    "vectors": "include the vectors (larger file, faster restore)",
}


def plain(values: Sequence[str] | None) -> list[str] | None:
    """A list of plain strings (the engine's type) from a list of a closed set's values."""
    return None if values is None else list(values)


def describe(properties: dict[str, dict[str, Any]]) -> None:
    """Give each schema property without a description the vocabulary's line for its name, and
    drop what an agent need not read: an optional parameter's ``null`` branch and ``default:
    null`` (leaving it out means the same, and the call still accepts null)."""
    for name, schema in properties.items():
        if "description" not in schema and name in DESCRIPTIONS:
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
