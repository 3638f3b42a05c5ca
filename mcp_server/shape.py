"""The MCP door's JSON for engine results, and the wording addressed to an
agent ("call X again ...").

The engine returns typed results (``kenning.memory.lifecycle.Candidates``, ``ProjectPreview``, ...)
that
say what happened; what an agent should do next is this door's to say, in the tools' own terms.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from kenning.core.errors import InvalidInput
from kenning.core.models import Note, RememberResult
from kenning.memory.lifecycle import Candidates, ProjectDone, ProjectPreview, Transition
from kenning.memory.memories import ForgetPreview, Forgotten
from kenning.memory.recall import RecallResult
from kenning.memory.suppression import Suppressed


def key_or_query(key: str | None, query: str | None) -> str | None:
    """The key to act on, or None when the call names a query instead
    (candidates only, never an action)."""
    if (key is None) == (query is None):
        raise InvalidInput(
            "give either a key or a query", hint="a query returns candidates to confirm by key"
        )
    return key


def remembered(result: RememberResult) -> dict[str, Any]:
    """remember's reply, its notes worded for an agent."""
    out = result.public()
    if result.notes:
        out["notes"] = [note(n) for n in result.notes]
    return out


def note(n: Note) -> str:
    """One remember note as a sentence (what happened, and the tool that settles or lifts it)."""
    if n.kind == "contradiction":
        return (
            f"possible contradiction with {n.other} (contradiction {n.contradiction}, "
            "open; both now disputed): "
            "settle it with resolve_contradiction"
        )
    if n.kind == "suppressed":
        return (
            f"stored, but hidden from recall and briefings by the suppression of '{n.term}' "
            f"({n.reason}); lift it with unsuppress_topic(term='{n.term}') if "
            "this memory should be found"
        )
    if n.kind == "duplicate" and n.key is not None:
        return f"an equivalent memory exists, {n.key} ({n.state}): {n.content!r}; not stored again"
    if n.kind == "duplicate":
        return "an equivalent memory exists; not stored again"
    if n.kind == "refreshed":
        return f"its event date is now {n.event_date} (refresh)"
    if n.kind == "replayed":
        return "stored by an earlier call with this idempotency key"
    return n.text or ""


def transition(done: Transition) -> dict[str, Any]:
    return {"status": "done", **done.public()}


def candidates(found: Candidates) -> dict[str, Any]:
    """A query's candidates; a query never acts, even when exactly one memory matches."""
    return {
        "status": "needs_confirmation",
        "action": found.action,
        "acted": False,
        "candidates": [asdict(c) for c in found.found],
        "next": f"call {found.action} again with the key of the memory you mean"
        if found.found
        else "no memory is similar enough; refine the query or give a key",
    }


def project(result: ProjectPreview | ProjectDone) -> dict[str, Any]:
    """A project action's preview, or what it did (``partial`` when the per-call cap stopped it)."""
    if isinstance(result, ProjectPreview):
        return {
            "status": "preview",
            "action": result.action,
            "project": result.project,
            "would_affect": result.would_affect,
            "sample": list(result.sample),
            "next": f"call {result.action} again with confirm=true and a reason",
        }
    out: dict[str, Any] = {
        "status": "done",
        "action": result.action,
        "project": result.project,
        "affected": result.affected,
    }
    if result.remaining:  # say so, never imply done
        out.update(
            status="partial",
            remaining=result.remaining,
            next=f"call {result.action} again with confirm=true",
        )
    return out


def forget(result: ForgetPreview | Forgotten) -> dict[str, Any]:
    if isinstance(result, Forgotten):
        return {"status": "forgotten", "key": result.key}
    return {
        "status": "preview",
        "would_forget": asdict(result),
        "next": "call forget again with confirm=true to delete this memory",
    }


def recall(result: RecallResult, *, full: bool) -> dict[str, Any]:
    """A recall's JSON; each suppression that hid a hit names the call that lifts it."""
    out = result.public(full=full)
    if "suppressed" in out:
        out["suppressed"] = [
            {**s, "lift": f"unsuppress_topic(term='{s['term']}')"} for s in out["suppressed"]
        ]
    return out


def suppression(result: Suppressed) -> dict[str, Any]:
    """suppress_topic's answer; a preview says how to go ahead."""
    out = result.public()
    return (
        {**out, "next": "call again without preview to suppress"}
        if result.status == "preview"
        else out
    )
