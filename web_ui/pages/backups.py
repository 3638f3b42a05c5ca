"""Backups (admin): create, download, upload, the dry-run report, and restore -- only of a file
whose dry run was just shown (the restore form exists only on the report)."""

from __future__ import annotations

import uuid
from typing import Any

from starlette.datastructures import UploadFile
from starlette.requests import Request
from starlette.responses import FileResponse, Response
from starlette.routing import Route

from kenning.core.errors import InvalidInput
from web_ui.forms import attempt, confirmed, form_of, login
from web_ui.guard import guard
from web_ui.runtime import runtime
from web_ui.views import render


async def _backups(request: Request, extra: dict[str, Any]) -> Response:
    rt = runtime(request)
    listed = await rt.run(rt.engine.backups.list_backups)
    # each rendering of the create form carries its own idempotency key: the same form submitted
    # twice (a double click, a resubmission) writes one backup
    data = {"backups": [b.public() for b in listed], "report": None, "once": uuid.uuid4().hex}
    return render(request, "backups.html", {**data, **extra})


@guard("admin")
async def backups(request: Request) -> Response:
    return await _backups(request, {})


@guard("admin")
async def create(request: Request) -> Response:
    rt = runtime(request)
    fields = await form_of(request)

    async def act() -> Response:
        done = await rt.run(
            rt.engine.backups.backup,
            vectors=fields.get("vectors") == "on",
            label=fields.get("label") or None,
            actor=login(request).actor,
            idempotency_key=fields.get("once") or None,
        )
        # the server's layout is not the page's
        shown = {k: v for k, v in done.public().items() if k != "path"}
        return await confirmed(
            request,
            action="backup",
            title=f"backup written: {done.file}",
            changed=shown,
            back="/backups",
        )

    return await attempt(request, act, _backups)


@guard("admin")
async def download(request: Request) -> Response:
    rt = runtime(request)
    name = request.query_params.get("file", "")
    path = await rt.run(rt.engine.backups.path_of, name)
    return FileResponse(path, media_type="application/json", filename=path.name)


@guard("admin")
async def upload(request: Request) -> Response:
    rt = runtime(request)
    form = await request.form()
    sent = form.get("file")

    async def act() -> Response:
        if not isinstance(sent, UploadFile) or not sent.filename:
            raise InvalidInput("choose a backup file to upload")
        data = await sent.read()
        done = await rt.run(
            rt.engine.backups.receive, sent.filename, data, actor=login(request).actor
        )
        return await _report(request, done.file, {"uploaded": done.public()})

    return await attempt(request, act, _backups)


async def _report(request: Request, name: str, extra: dict[str, Any]) -> Response:
    rt = runtime(request)
    report = await rt.run(
        rt.engine.backups.restore_file, name, dry_run=True, actor=login(request).actor
    )
    return await _backups(request, {"report": report.public(), "report_file": name, **extra})


@guard("admin")
async def dry_run(request: Request) -> Response:
    return await _report(request, request.query_params.get("file", ""), {})


@guard("admin")
async def restore(request: Request) -> Response:
    rt = runtime(request)
    fields = await form_of(request)

    async def act() -> Response:
        if fields.get("reviewed") != "yes":
            raise InvalidInput("read the dry-run report first", hint="press Dry run, then Restore")
        report = await rt.run(
            rt.engine.backups.restore_file,
            fields.get("file", ""),
            dry_run=False,
            actor=login(request).actor,
        )
        changed = {k: v for k, v in report.public().items() if k != "items"}
        return await confirmed(
            request,
            action="restore",
            title=f"restored: {fields.get('file')}",
            changed=changed,
            back="/backups",
        )

    return await attempt(request, act, _backups)


routes = [
    Route("/backups", backups, methods=["GET"]),
    Route("/backups", create, methods=["POST"]),
    Route("/backups/file", download, methods=["GET"]),
    Route("/backups/upload", upload, methods=["POST"]),
    Route("/backups/dry-run", dry_run, methods=["GET"]),
    Route("/backups/restore", restore, methods=["POST"]),
]
