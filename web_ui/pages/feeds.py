"""Feeds: every entry of feeds.yml as the engine validates it (a bad entry shows its line and
error and is disabled), each feed's last fetch, its error and backoff, the articles the last run
ingested, and the worker's last run of its job. Read-only: feeds.yml is edited with `kenning
feeds add/disable`, and a fetch is the worker's (or `kenning feeds fetch
NAME`), never a web request's."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.engine import Engine
from kenning.knowledge.feeds.ingest import FeedStatus
from web_ui.guard import guard
from web_ui.runtime import runtime
from web_ui.views import render


def _row(status: FeedStatus, runs: dict[str, dict[str, Any]]) -> dict[str, Any]:
    feed = status.feed.model_dump(mode="json") if status.feed is not None else None
    return {
        "name": status.name,
        "feed": feed,
        "problem": str(status.problem) if status.problem else None,
        "state": asdict(status.state),
        "health": status.health,
        "job": runs.get(status.job),
    }


def gather(engine: Engine) -> dict[str, Any]:
    runs = {name: run.to_dict() for name, run in engine.jobs.last_runs().items()}
    rows = [_row(status, runs) for status in engine.feeds.statuses()]
    return {
        "feeds": rows,
        "file": str(engine.ctx.settings.resolved_feeds_file),
        "invalid": sum(1 for r in rows if r["problem"]),
        "failing": sum(1 for r in rows if r["health"] == "failing"),
    }


@guard("viewer")
async def feeds(request: Request) -> Response:
    rt = runtime(request)
    return render(request, "feeds.html", await rt.run(gather, rt.engine))


routes = [Route("/feeds", feeds, methods=["GET"])]
