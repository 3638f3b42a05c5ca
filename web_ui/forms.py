"""Form handling shared by the pages: reading fields, re-showing a form with the engine's error
(nothing was written: the engine validates before it changes anything), and confirming what an
action changed with a link to its audit event."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from kenning.core.errors import InvalidInput, KenningError
from web_ui.errors import described, status_of
from web_ui.runtime import runtime
from web_ui.sessions import Login
from web_ui.views import login_of, render

MAX_FIELD = 60_000  # a little over the engine's content limit: the engine says what the limit is

Page = Callable[[Request, dict[str, Any]], Awaitable[Response]]


async def form_of(request: Request) -> dict[str, str]:
    """The submitted text fields (uploads are read by their own page)."""
    form: FormData = await request.form()
    out: dict[str, str] = {}
    for name, value in form.multi_items():
        if isinstance(value, str):
            if len(value) > MAX_FIELD:
                raise InvalidInput(f"the field {name!r} is longer than {MAX_FIELD} characters")
            out[name] = value.strip()
    return out


def login(request: Request) -> Login:
    value = login_of(request)
    if value is None:  # only reachable from a page without @guard: a programming error
        raise RuntimeError("this page needs @guard")
    return value


async def attempt(
    request: Request, action: Callable[[], Awaitable[Response]], again: Page
) -> Response:
    """Run a form's ``action``; on an input or state error show the form ``again`` with it.

    Outages are not form errors: they reach ``web_ui.errors`` and show the outage page.
    """
    try:
        return await action()
    except KenningError as exc:
        if status_of(exc) >= 500 or status_of(exc) == 403:
            raise
        response = await again(request, {"error": described(exc), "form": await form_of(request)})
        response.status_code = status_of(exc)
        return response


async def confirmed(
    request: Request, *, action: str, title: str, changed: dict[str, Any], back: str
) -> Response:
    """What an action changed, and the audit event it appended (the newest
    of this person and action)."""
    rt = runtime(request)
    found = await rt.run(
        rt.engine.history.audit_log, actor=login(request).actor, action=action, limit=1
    )
    event = found.public()["events"][0] if found.events else None
    return render(
        request,
        "done.html",
        {"title": title, "changed": changed, "event": event, "back": back, "action": action},
    )


@dataclass(frozen=True)
class Submitted:
    """A form as an action reads it: its text fields, and every value of the
    fields sent more than once."""

    fields: dict[str, str]
    lists: dict[str, list[str]]

    def get(self, name: str) -> str:
        return self.fields.get(name, "")

    def all(self, name: str) -> list[str]:
        return self.lists.get(name, [])


@dataclass(frozen=True)
class Done:
    """What an action did: the audit action it appended, a title, what
    changed, where to go back to."""

    action: str
    title: str
    changed: dict[str, Any]
    back: str


Work = Callable[[Submitted, str], Done]


async def submit(request: Request, again: Page, work: Work) -> Response:
    """The usual form: ``work(form, actor)`` runs off the loop (the engine validates before it
    writes), then the confirmation with its audit event; an input error shows the form ``again``."""
    rt = runtime(request)
    raw: FormData = await request.form()
    names = {name for name, _ in raw.multi_items()}
    form = Submitted(
        await form_of(request),
        {name: [v for v in raw.getlist(name) if isinstance(v, str)] for name in names},
    )

    async def act() -> Response:
        done = await rt.run(work, form, login(request).actor)
        return await confirmed(
            request, action=done.action, title=done.title, changed=done.changed, back=done.back
        )

    return await attempt(request, act, again)
