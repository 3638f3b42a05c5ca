"""Memories: the filtered, sorted, paginated list (FT queries through the engine's audit listing,
never SCAN) with bulk lifecycle actions, and one memory's page (every field, experience,
contradictions, history, lifecycle and trust actions, edit with re-embed, tags)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.core.errors import InvalidInput
from kenning.core.models import STATES, TRUST_LEVELS
from kenning.core.validation import namespaces
from kenning.engine import Engine
from kenning.memory.fields import KINDS
from kenning.memory.inspection import AuditRequest
from web_ui.forms import attempt, confirmed, form_of, login
from web_ui.guard import guard
from web_ui.runtime import runtime
from web_ui.views import render

PAGE_SIZE = 25
SORTS = ("created_at", "updated_at", "recall_count", "last_recalled")
# where a memory came from: its kind (an agent's memory, a document chunk, a feed article...)
SOURCES = KINDS
TARGETS = {"deprioritise": "deprioritised", "archive": "archived", "reinstate": "active"}


def number(value: str | None, name: str, default: int) -> int:
    if value in (None, ""):
        return default
    if not value.isdigit() or len(value) > 6:
        raise InvalidInput(f"{name} must be a whole number; got {value!r}")
    return int(value)


def listing_request(params: dict[str, str]) -> AuditRequest:
    """The list's filters from the query string (the engine validates names, tags and the sort)."""
    page = max(1, number(params.get("page"), "page", 1))
    picked = {
        name: params.get(name) or None
        for name in ("namespace", "project", "state", "tag", "trust", "source")
    }
    for name, allowed in (("trust", TRUST_LEVELS), ("source", SOURCES)):
        if picked[name] is not None and picked[name] not in allowed:
            raise InvalidInput(
                f"unknown {name} {picked[name]!r}", hint=f"use one of {', '.join(allowed)}"
            )
    return AuditRequest(
        namespaces=[picked["namespace"]] if picked["namespace"] else None,
        projects=[picked["project"]] if picked["project"] else None,
        states=[picked["state"]] if picked["state"] else None,
        tags=[picked["tag"]] if picked["tag"] else None,
        trusts=[picked["trust"]] if picked["trust"] else None,
        kinds=[picked["source"]] if picked["source"] else None,
        sort=params.get("sort") or "created_at",
        descending=params.get("order", "desc") != "asc",
        offset=(page - 1) * PAGE_SIZE,
        limit=PAGE_SIZE,
    )


async def _list(request: Request, extra: dict[str, Any]) -> Response:
    rt = runtime(request)
    params = dict(request.query_params)
    listed = (
        await rt.run(rt.engine.inspection.audit, listing_request(params), for_person=True)
    ).public()
    page = listed["page"]
    data = {
        "listed": listed,
        "filters": params,
        "namespaces": namespaces(None),
        "states": STATES,
        "sorts": SORTS,
        "trusts": TRUST_LEVELS,
        "sources": SOURCES,
        "page_number": page["offset"] // PAGE_SIZE + 1,
        "pages": max(1, -(-page["total"] // PAGE_SIZE)),
        **extra,
    }
    return render(request, "memories.html", data)


@guard("viewer")
async def memories(request: Request) -> Response:
    return await _list(request, {})


@guard("editor")
async def bulk(request: Request) -> Response:
    rt = runtime(request)
    form = await request.form()
    keys = [k for k in form.getlist("keys") if isinstance(k, str)]
    fields = await form_of(request)

    async def act() -> Response:
        action = fields.get("action", "")
        if action not in TARGETS:
            raise InvalidInput(
                f"unknown action {action!r}", hint=f"use one of {', '.join(TARGETS)}"
            )
        done = await rt.run(
            rt.engine.lifecycle.transition_many,
            keys,
            TARGETS[action],
            reason=fields.get("reason"),
            actor=login(request).actor,
            # the states the list showed: a memory moved since is named, none moves
            seen={k: fields[f"state:{k}"] for k in keys if f"state:{k}" in fields},
        )
        return await confirmed(
            request,
            action=action,
            title=f"{action}: {len(done)} memories",
            changed={"memories": [t.public() for t in done]},
            back="/memories",
        )

    async def again(request: Request, extra: dict[str, Any]) -> Response:
        return await _list(request, {**extra, "selected": keys})  # still ticked, to untick some

    return await attempt(request, act, again)


def detail_data(engine: Engine, key: str) -> dict[str, Any]:
    explained = engine.inspection.explain(key).public()
    return {
        **explained,
        "experience": engine.experience.get_experience(key).public(),
        "contradictions": engine.contradictions.board(status="all", key=key).public()[
            "contradictions"
        ],
    }


async def _detail(request: Request, extra: dict[str, Any]) -> Response:
    rt = runtime(request)
    key = request.query_params.get("key") or (extra.get("form") or {}).get("key") or ""
    if not key:
        raise InvalidInput("which memory? the page needs ?key=", hint="open a memory from the list")
    data = await rt.run(detail_data, rt.engine, key)
    return render(request, "memory.html", {**data, "targets": TARGETS, **extra})


@guard("viewer")
async def memory(request: Request) -> Response:
    return await _detail(request, {})


@dataclass(frozen=True, slots=True)
class _Asked:
    """One submitted action of a memory's page."""

    request: Request
    key: str
    fields: dict[str, str]
    actor: str

    @property
    def back(self) -> str:
        return f"/memory?key={self.key}"

    @property
    def reason(self) -> str | None:
        return self.fields.get("reason") or None

    async def done(self, action: str, title: str, changed: dict[str, Any]) -> Response:
        return await confirmed(
            self.request, action=action, title=title, changed=changed, back=self.back
        )


async def _move(asked: _Asked, do: str) -> Response:
    rt = runtime(asked.request)
    done = await rt.run(
        rt.engine.lifecycle.transition,
        asked.key,
        TARGETS[do],
        reason=asked.fields.get("reason"),
        actor=asked.actor,
    )
    return await asked.done(do, f"{do}: {asked.key}", done.public())


async def _verify(asked: _Asked) -> Response:
    rt = runtime(asked.request)
    verified = await rt.run(rt.engine.belief.verify, asked.key, asked.reason, actor=asked.actor)
    changed = {"key": asked.key, "trust": verified.trust}
    return await asked.done("verify", f"verified: {asked.key}", changed)


async def _edit(asked: _Asked) -> Response:
    rt = runtime(asked.request)
    edited = await rt.run(
        rt.engine.memories.update,
        asked.key,
        asked.fields.get("content", ""),
        actor=asked.actor,
        reason=asked.reason,
    )
    changed = {"key": asked.key, "content": edited.content}
    return await asked.done("update", f"edited and re-embedded: {asked.key}", changed)


async def _tags(asked: _Asked) -> Response:
    rt = runtime(asked.request)
    tagged = await rt.run(
        rt.engine.memories.retag,
        asked.key,
        add=_words(asked.fields.get("add")),
        remove=_words(asked.fields.get("remove")),
        actor=asked.actor,
        reason=asked.reason,
    )
    changed = {"key": asked.key, "tags": list(tagged.tags)}
    return await asked.done("retag", f"tags changed: {asked.key}", changed)


_ACTIONS = {"verify": _verify, "edit": _edit, "tags": _tags}


@guard("editor")
async def change(request: Request) -> Response:
    """One memory's actions: state, verify, edit (re-embedded), tags; ``do`` names which."""
    fields = await form_of(request)
    do = fields.get("do", "")
    asked = _Asked(request, fields.get("key", ""), fields, login(request).actor)

    async def act() -> Response:
        if do in TARGETS:
            return await _move(asked, do)
        if do in _ACTIONS:
            return await _ACTIONS[do](asked)
        raise InvalidInput(f"unknown action {do!r}", hint="use the buttons of the memory's page")

    return await attempt(request, act, _detail)


def _words(value: str | None) -> list[str]:
    return [w for w in (value or "").replace(",", " ").split() if w]


routes = [
    Route("/memories", memories, methods=["GET"]),
    Route("/memories/bulk", bulk, methods=["POST"]),
    Route("/memory", memory, methods=["GET"]),
    Route("/memory", change, methods=["POST"]),
]
