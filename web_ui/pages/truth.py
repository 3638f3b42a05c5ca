"""Contradictions (the open queue side by side, resolve with a decision and a note; resolved
history), duplicates (clusters, merge or keep both with a reason) and suppressions (add after
the impact preview; lift after reading what lifting brings back, automatic ones marked)."""

from __future__ import annotations

from functools import partial
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.core.errors import InvalidInput
from kenning.core.validation import namespaces
from kenning.engine import Engine
from kenning.truth.contradictions import DECISIONS
from web_ui.forms import Done, Submitted, attempt, confirmed, form_of, login, submit
from web_ui.guard import guard
from web_ui.runtime import runtime
from web_ui.views import render

STATUSES = ("open", "resolved", "closed", "all")
LIST_LIMIT = 50


# --- contradictions ----------------------------------------------------------------------
async def _contradictions(request: Request, extra: dict[str, Any]) -> Response:
    rt = runtime(request)
    status = request.query_params.get("status", "open")
    project = request.query_params.get("project") or None
    board = await rt.run(
        rt.engine.contradictions.board, status=status, project=project, limit=LIST_LIMIT
    )
    return render(
        request,
        "contradictions.html",
        {
            **board.public(),
            "status": status,
            "statuses": STATUSES,
            "project": project or "",
            "decisions": DECISIONS,
            **extra,
        },
    )


@guard("viewer")
async def contradictions(request: Request) -> Response:
    return await _contradictions(request, {})


@guard("editor")
async def resolve(request: Request) -> Response:
    rt = runtime(request)
    fields = await form_of(request)

    async def act() -> Response:
        record = await rt.run(
            rt.engine.contradictions.resolve,
            fields.get("id", ""),
            fields.get("decision", ""),
            fields.get("note") or None,
            actor=login(request).actor,
            content=fields.get("content") or None,
        )
        return await confirmed(
            request,
            action="resolve_contradiction",
            title=(f"contradiction {record.id} resolved: {record.decision}"),
            changed=record.public(),
            back="/contradictions",
        )

    return await attempt(request, act, _contradictions)


# --- duplicates --------------------------------------------------------------------------
async def _duplicates(request: Request, extra: dict[str, Any]) -> Response:
    rt = runtime(request)
    namespace = request.query_params.get("namespace", "knowledge")
    project = request.query_params.get("project") or None
    found = await rt.run(rt.engine.duplicates.find, namespace, project=project)
    return render(
        request,
        "duplicates.html",
        {**found.public(), "project": project or "", "namespaces": namespaces(None), **extra},
    )


@guard("viewer")
async def duplicates(request: Request) -> Response:
    return await _duplicates(request, {})


@guard("editor")
async def merge(request: Request) -> Response:
    rt = runtime(request)
    form = await request.form()
    fields = await form_of(request)
    others = [k for k in form.getlist("others") if isinstance(k, str) and k != fields.get("keep")]

    async def act() -> Response:
        merged = await rt.run(
            rt.engine.duplicates.merge,
            fields.get("keep", ""),
            others,
            fields.get("reason") or None,
            actor=login(request).actor,
        )
        return await confirmed(
            request,
            action="merge_duplicates",
            title=f"merged into {merged.kept}",
            changed=merged.public(),
            back="/duplicates",
        )

    return await attempt(request, act, _duplicates)


def keep_all(engine: Engine, form: Submitted, actor: str) -> Done:
    kept = engine.duplicates.keep_both(form.all("members"), form.get("reason") or None, actor=actor)
    return Done(
        "keep_duplicates", f"kept all {len(kept.kept)} as distinct", kept.public(), "/duplicates"
    )


@guard("editor")
async def keep_both(request: Request) -> Response:
    """A person's "these are not duplicates": recorded with the reason, the
    cluster is not proposed again."""
    return await submit(request, _duplicates, partial(keep_all, runtime(request).engine))


# --- suppressions ------------------------------------------------------------------------
async def _suppressions(request: Request, extra: dict[str, Any]) -> Response:
    rt = runtime(request)
    listed = await rt.run(rt.engine.suppressions.list_suppressions)
    data: dict[str, Any] = {"suppressions": [s.public() for s in listed], "preview": None, **extra}
    term, reason = (
        request.query_params.get("term", "").strip(),
        request.query_params.get("reason", "").strip(),
    )
    if term and "error" not in extra:
        preview = await rt.run(
            rt.engine.suppressions.suppress, term, reason, preview=True, actor=login(request).actor
        )
        data["preview"] = {**preview.public(), "reason": reason}
    lifted = request.query_params.get("lift", "").strip()
    data["lifting"] = None
    if lifted and "error" not in extra:  # what lifting brings back, shown before the Lift button
        data["lifting"] = (await rt.run(rt.engine.suppressions.lifting, lifted)).public()
    return render(request, "suppressions.html", data)


@guard("viewer")
async def suppressions(request: Request) -> Response:
    return await attempt(request, lambda: _suppressions(request, {}), _suppressions)


@guard("editor")
async def suppress(request: Request) -> Response:
    rt = runtime(request)
    fields = await form_of(request)

    async def act() -> Response:
        if fields.get("reviewed") != "yes":  # the form only carries it once the preview was shown
            raise InvalidInput("read the impact preview first", hint="press Preview, then Suppress")
        done = await rt.run(
            rt.engine.suppressions.suppress,
            fields.get("term", ""),
            fields.get("reason"),
            actor=login(request).actor,
        )
        return await confirmed(
            request,
            action="suppress",
            title=f"suppressed: {done.term}",
            changed=done.public(),
            back="/suppressions",
        )

    return await attempt(request, act, _suppressions)


@guard("editor")
async def lift(request: Request) -> Response:
    rt = runtime(request)
    fields = await form_of(request)

    async def act() -> Response:
        if fields.get("reviewed") != "yes":  # the form only carries it once the preview was shown
            raise InvalidInput(
                "read what lifting brings back first", hint="press Lift…, then confirm"
            )
        done = await rt.run(
            rt.engine.suppressions.unsuppress,
            fields.get("term", ""),
            actor=login(request).actor,
            reason=fields.get("reason") or None,
        )
        return await confirmed(
            request,
            action="unsuppress",
            title=f"lifted: {done.term}",
            changed=done.public(),
            back="/suppressions",
        )

    return await attempt(request, act, _suppressions)


routes = [
    Route("/contradictions", contradictions, methods=["GET"]),
    Route("/contradictions", resolve, methods=["POST"]),
    Route("/duplicates", duplicates, methods=["GET"]),
    Route("/duplicates", merge, methods=["POST"]),
    Route("/duplicates/keep", keep_both, methods=["POST"]),
    Route("/suppressions", suppressions, methods=["GET"]),
    Route("/suppressions", suppress, methods=["POST"]),
    Route("/suppressions/lift", lift, methods=["POST"]),
]
