"""Telemetry: the most recalled memories, those gone cold and those never recalled; the recall
log searched ("why did you mention X": the recalls that returned a memory, or whose query held
some words); and the charts of what happened per day, with recall latency from the
MCP server's own histogram."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from kenning.core.errors import InvalidInput
from kenning.engine import Engine
from web_ui import charts, latency
from web_ui.errors import described
from web_ui.guard import guard
from web_ui.runtime import runtime
from web_ui.views import render

LISTS = ("most", "cold", "never")
SHORT, LONG = 10, 25  # rows of a list shown beside the others / shown alone
LOG_PAGE = 20


@dataclass(frozen=True)
class Ask:
    """The page's query parameters, checked (InvalidInput says which one is wrong and how)."""

    only: str | None = None
    page: int = 1
    cold_days: int = 30
    days: int = 14
    key: str = ""
    words: str = ""
    before: str | None = None

    @classmethod
    def parse(cls, params: QueryParams) -> Ask:
        only = params.get("list") or None
        if only is not None and only not in LISTS:
            raise InvalidInput(f"unknown list {only!r}", hint=f"use one of {', '.join(LISTS)}")
        return cls(
            only=only,
            page=_int(params, "page", 1, 1, 40),
            cold_days=_int(params, "cold_days", 30, 1, 3650),
            days=_int(params, "days", 14, 7, 90),
            key=params.get("key", "").strip(),
            words=params.get("q", "").strip(),
            before=params.get("before") or None,
        )  # the engine checks both

    @property
    def limit(self) -> int:
        return LONG if self.only else SHORT

    def shown(self) -> tuple[str, ...]:
        return (self.only,) if self.only else LISTS


def _int(params: QueryParams, name: str, default: int, low: int, high: int) -> int:
    raw = params.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or not low <= int(raw) <= high:
        raise InvalidInput(
            f"{name} must be a whole number from {low} to {high}; got {raw[:20]!r}",
            hint=f"leave {name} empty for {default}",
        )
    return int(raw)


def gather(engine: Engine, ask: Ask) -> dict[str, Any]:
    offset = (ask.page - 1) * ask.limit
    t = engine.telemetry
    listings = {
        "most": lambda: t.most_recalled(offset=offset, limit=ask.limit),
        "cold": lambda: t.gone_cold(days=ask.cold_days, offset=offset, limit=ask.limit),
        "never": lambda: t.never_recalled(offset=offset, limit=ask.limit),
    }
    log = (
        t.search_log(key=ask.key or None, text=ask.words or None, before=ask.before, limit=LOG_PAGE)
        if ask.key or ask.words
        else None
    )
    return {
        "lists": {name: listings[name]().public() for name in ask.shown()},
        "log": log and log.public(),
        "charts": day_charts(engine, ask.days),
    }


def day_charts(engine: Engine, days: int) -> dict[str, Any]:
    a = engine.activity
    made, contra, feeds = (
        a.memories_created(days),
        a.contradictions_per_day(days),
        a.feed_articles(days),
    )
    return {
        "memories": charts.columns(
            made.days,
            made.series,
            title="Memories created per day, by namespace",
            x_label="day (UTC)",
            y_label="memories",
            short=5,
        ),
        "contradictions": charts.columns(
            contra.days,
            contra.series,
            stacked=False,
            short=5,
            title="Contradictions opened and resolved per day",
            x_label="day (UTC)",
            y_label="contradictions",
        ),
        "feeds": charts.columns(
            feeds.days,
            feeds.series,
            title="Feed articles ingested per day",
            x_label="day (UTC)",
            y_label="articles",
            short=5,
        ),
    }


def latency_chart(scraped: dict[str, Any]) -> dict[str, Any]:
    if not scraped["ok"]:
        return {"ok": False, "error": scraped["error"]}
    buckets = scraped["buckets"]
    chart = charts.columns(
        [b["label"] for b in buckets],
        {"recalls": [b["count"] for b in buckets]},
        title="Recall latency on the MCP server since it started",
        x_label="took at most",
        y_label="recalls",
    )
    return {"ok": True, "chart": chart, "count": scraped["count"], "url": scraped["url"]}


@guard("viewer")
async def telemetry(request: Request) -> Response:
    rt = runtime(request)
    try:
        ask = Ask.parse(request.query_params)
        data = await rt.run(gather, rt.engine, ask)
    except InvalidInput as exc:
        return render(
            request,
            "telemetry.html",
            {
                "ask": _form(request.query_params),
                "error": described(exc),
                "lists": {},
                "log": None,
                "charts": None,
                "latency": None,
            },
            status=400,
        )
    data["latency"] = latency_chart(await rt.run(latency.scrape, latency.metrics_url(rt.settings)))
    return render(request, "telemetry.html", {"ask": _form(request.query_params), **data})


def _form(params: QueryParams) -> dict[str, str]:
    """What the filters show again (as typed, bounded)."""
    return {
        name: params.get(name, "")[:500]
        for name in ("list", "page", "cold_days", "days", "key", "q")
    }


routes = [Route("/telemetry", telemetry, methods=["GET"])]
