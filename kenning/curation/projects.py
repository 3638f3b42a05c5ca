"""Project context (docs/projects.md): what a project is, its stack, conventions and current state.

One context per project, stored as a memory of kind ``context`` in the ``project`` namespace under a
key derived from the project name (``{prefix}mem:project:context.<name>``), so setting a context
twice can never create two. The memory's content is the rendered context, so recall finds it; it is
re-embedded only when one of the embedded fields changes.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from typing import Any

from kenning.core import query, validation
from kenning.core.errors import Conflict, InvalidInput, NotFound
from kenning.core.models import Memory, iso
from kenning.core.schema import NAMESPACES
from kenning.memory.fields import content_sha
from kenning.runtime.context import Context
from kenning.runtime.once import once
from kenning.store import SWAP_ATTEMPTS, Op, pause

NAMESPACE = "project"
KIND = "context"
EMBEDDED = ("description", "stack", "conventions", "state")
LIMITS = {"description": 5_000, "conventions": 10_000, "state": 5_000}
MAX_STACK = 30
MAX_LIST = 200


@dataclass(frozen=True)
class ProjectContext:
    name: str
    description: str = ""
    stack: tuple[str, ...] = ()
    conventions: str = ""
    state: str = ""
    key: str = ""
    created_at: float | None = None
    updated_at: float | None = None

    def render(self) -> str:
        """The embedded text: what recall matches against."""
        lines = [f"Project {self.name}."]
        if self.description:
            lines.append(f"Description: {self.description}")
        if self.stack:
            lines.append(f"Stack: {', '.join(self.stack)}")
        if self.conventions:
            lines.append(f"Conventions: {self.conventions}")
        if self.state:
            lines.append(f"Current state: {self.state}")
        return "\n".join(lines)

    def fields(self) -> dict[str, Any]:
        return {
            "description": self.description,
            "stack": list(self.stack),
            "conventions": self.conventions,
            "state": self.state,
        }

    def public(self) -> dict[str, Any]:
        return {
            "name": self.name,
            **self.fields(),
            "key": self.key,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
        }


def _text(name: str, value: str | None) -> str | None:
    if value is None:
        return None
    if len(value) > LIMITS[name]:
        raise InvalidInput(
            f"{name} is {len(value):,} characters; the limit is {LIMITS[name]:,}",
            hint="keep the project context short; remember details as separate memories",
        )
    return value.strip()


def _stack(values: list[str] | tuple[str, ...] | None) -> tuple[str, ...] | None:
    if values is None:
        return None
    if len(values) > MAX_STACK or any(not v.strip() or len(v) > 100 for v in values):
        raise InvalidInput(
            f"stack is a list of at most {MAX_STACK} names of 1-100 characters",
            hint='e.g. ["python 3.11", "valkey", "fastmcp"]',
        )
    return tuple(dict.fromkeys(v.strip() for v in values))


def _reply(done: tuple[ProjectContext, str]) -> dict[str, Any]:
    context, status = done
    return {"status": status, "context": asdict(context)}


def _replayed(reply: dict[str, Any]) -> tuple[ProjectContext, str]:
    fields = reply["context"]
    return replace(ProjectContext(**fields), stack=tuple(fields["stack"])), str(reply["status"])


def from_memory(memory: Memory) -> ProjectContext:
    meta = memory.metadata
    return ProjectContext(
        name=memory.project,
        description=str(meta.get("description", "")),
        stack=tuple(meta.get("stack", ())),
        conventions=str(meta.get("conventions", "")),
        state=str(meta.get("state", "")),
        key=memory.key,
        created_at=memory.created_at,
        updated_at=memory.updated_at,
    )


@dataclass(frozen=True, slots=True)
class ProjectDescription:
    """A project's context and how many memories each namespace holds for
    it (``Projects.describe``)."""

    project: ProjectContext
    memories: dict[str, int]

    def public(self) -> dict[str, Any]:
        return {"project": self.project.public(), "memories": self.memories}


class Projects:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx

    def key(self, name: str) -> str:
        return self.ctx.store.memories.new_key(NAMESPACE, f"context.{name}")

    def get(self, name: str) -> ProjectContext:
        return from_memory(self._existing(validation.project(name)))

    def _existing(self, project: str) -> Memory:
        memory = self.ctx.store.memories.read(self.key(project))
        if memory is None:
            raise NotFound(
                f"project {project!r} has no context yet",
                hint="set one with set_project_context(name=..., description=...)",
            )
        return memory

    def set(
        self,
        name: str,
        *,
        actor: str,
        description: str | None = None,
        stack: list[str] | None = None,
        conventions: str | None = None,
        state: str | None = None,
        idempotency_key: str | None = None,
    ) -> tuple[ProjectContext, str]:
        """Create or change a project's context; fields left as None keep their value.

        Returns the context and what happened: ``created``, ``updated`` or ``unchanged``. With
        ``idempotency_key`` a retry (same caller, key and fields) returns the first call's reply
        -- ``created`` stays ``created`` -- and writes nothing (kenning.runtime.once).
        """
        project = validation.project(name)
        given = {
            "description": _text("description", description),
            "stack": _stack(stack),
            "conventions": _text("conventions", conventions),
            "state": _text("state", state),
        }

        def write() -> tuple[ProjectContext, str]:
            return self._change(project, given, actor=actor)

        if idempotency_key is None:
            return write()
        asked = json.dumps({"name": project, **given}, sort_keys=True)
        return once(
            self.ctx,
            "set_project_context",
            actor,
            idempotency_key,
            asked,
            write,
            public=_reply,
            load=_replayed,
        )

    def update_state(self, name: str, state: str, *, actor: str) -> tuple[ProjectContext, str]:
        """Change only the current state of an existing project (re-embedded when it changed)."""
        project = validation.project(name)
        self._existing(project)
        if not state or not state.strip():
            raise InvalidInput(
                "state is empty", hint="say in a sentence or two where the project stands"
            )
        return self._change(project, {"state": _text("state", state)}, actor=actor, existing=True)

    def _change(
        self, project: str, given: dict[str, Any], *, actor: str, existing: bool = False
    ) -> tuple[ProjectContext, str]:
        """The given fields over the context as read, written only while it is still as read
        (its content, or absent): a concurrent change is read again and this one applied
        over it, so no change is lost and each event's "before" is what it replaced."""
        changes: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
        for attempt in range(SWAP_ATTEMPTS):
            current = self._existing(project) if existing else self._read(project)
            before = from_memory(current) if current is not None else ProjectContext(name=project)
            after = replace(before, **changes)
            if current is not None and after.fields() == before.fields():
                return before, "unchanged"
            memory = self._write(project, current, after, actor=actor)
            if memory is not None:
                return from_memory(memory), "created" if current is None else "updated"
            pause(attempt)
        raise Conflict(
            f"the context of {project!r} kept changing while this change was made; "
            "nothing was written",
            hint="retry the call",
        )

    def _read(self, project: str) -> Memory | None:
        return self.ctx.store.memories.read(self.key(project))

    def _write(
        self, project: str, current: Memory | None, ctx_after: ProjectContext, *, actor: str
    ) -> Memory | None:
        now = self.ctx.clock.now()
        text = ctx_after.render()
        base = current or Memory(
            key=self.key(project),
            namespace=NAMESPACE,
            project=project,
            kind=KIND,
            actor=actor or "unknown",
            created_at=now,
            valid_from=now,
            source_key=f"project-context:{project}",
            title=f"Project {project}",
        )
        memory = replace(
            base,
            content=text,
            content_sha=content_sha(text),
            updated_at=now,
            metadata={**base.metadata, **ctx_after.fields()},
        )
        # only embedded fields changed -> re-embed
        embed = current is None or current.content != text
        changed = [
            f
            for f in EMBEDDED
            if current is None or current.metadata.get(f) != memory.metadata.get(f)
        ]
        event = self.ctx.event(
            actor,
            "project_context",
            memory.key,
            before=current.content if current else None,
            after=text,
            details={"project": project, "changed": changed, "re_embedded": embed},
        )
        vector = self.ctx.embedder.embed(text) if embed else None
        # written over every field it had (none goes away), only while it is as read
        # the content as read ('' = absent): its checksum is derived, not stored (schema)
        as_read: Op = ("GUARD", memory.key, ("content", current.content if current else ""))
        done = self.ctx.store.decide([event], new=[(memory, vector)], also=[as_read])
        return memory if done.applied else None

    def all(self, *, offset: int = 0, limit: int = 50) -> tuple[list[ProjectContext], int]:
        """Project contexts, most recently updated first, with the total count."""
        validation.bounded_int("limit", limit, 1, MAX_LIST)
        validation.bounded_int("offset", offset, 0, 100_000)
        search = query.Search(
            index=self.ctx.index,
            namespaces=(NAMESPACE,),
            clauses=(query.tag("kind", [KIND]),),
            sort_by="updated_at",
            descending=True,
            offset=offset,
            limit=limit,
            return_fields=("project", "metadata", "created_at", "updated_at", "content"),
        )
        result = self.ctx.store.memories.search(search)
        return [from_memory(h.memory) for h in result.hits], result.total

    def describe(self, name: str) -> ProjectDescription:
        """A project's context and how many memories each namespace holds for it."""
        return ProjectDescription(self.get(name), self.memory_counts(name))

    def memory_counts(self, name: str) -> dict[str, int]:
        """How many memories each namespace holds for one project (FT counts, no scan)."""
        project = validation.project(name)
        return {
            ns: self.ctx.store.memories.count(
                query.Search(
                    index=self.ctx.index,
                    namespaces=(ns,),
                    clauses=(query.tag("project", [project]),),
                )
            )
            for ns in NAMESPACES
        }
