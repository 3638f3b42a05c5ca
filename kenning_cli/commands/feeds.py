"""`kenning feeds list|check|fetch NAME|add NAME URL|disable NAME`: the feeds of feeds.yml
(docs/feeds.md).

``list`` and ``check`` need no model (list reads the per-feed state from Valkey; check reads only
the file and DNS); ``fetch`` opens the engine and ingests one feed now, whatever its backoff says.
"""

from __future__ import annotations

import argparse

from pydantic import ValidationError

from kenning.core.errors import FeedError, InvalidInput
from kenning.core.models import iso
from kenning.core.settings import Settings
from kenning.knowledge.feeds import config, guard
from kenning.knowledge.feeds.config import Feed
from kenning.knowledge.feeds.ingest import FeedRun, FeedStatus, statuses
from kenning_cli.registry import command


def _arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    sub.add_parser("list", help="every feed and its state: last fetch, failures, last error")
    sub.add_parser("check", help="validate feeds.yml; run each URL's host through the SSRF guard")
    fetch = sub.add_parser("fetch", help="ingest one feed now (ignores its backoff)")
    fetch.add_argument("name")
    add = sub.add_parser("add", help="append a feed to feeds.yml (validated first)")
    add.add_argument("name")
    add.add_argument("url")
    add.add_argument("--topics", default="", help="comma-separated tags every article carries")
    add.add_argument("--project", default=None, help="the project the articles belong to")
    add.add_argument(
        "--interval-minutes", type=float, default=360.0, help="how often (default 360)"
    )
    add.add_argument("--mode", choices=("excerpt", "summary", "digest"), default="excerpt")
    add.add_argument(
        "--retention-days", type=int, default=90, help="articles expire after (default 90)"
    )
    disable = sub.add_parser("disable", help="set enabled: false on a feed in feeds.yml")
    disable.add_argument("name")


@command(
    "feeds",
    "Feeds of feeds.yml: list (state and errors), check, fetch NAME, add, disable.",
    _arguments,
)
def _feeds(args: argparse.Namespace, settings: Settings) -> int:
    path = settings.resolved_feeds_file
    if args.action == "list":
        return _list(settings)
    if args.action == "check":
        return _check(settings)
    if args.action == "fetch":
        return _fetch(settings, args.name)
    if args.action == "add":
        config.append(path, _new_feed(args))
        print(
            f"added feed {args.name} to {path}; a running worker picks it up within "
            f"{settings.feed_reload_seconds:g} s"
        )
        return 0
    config.disable(path, args.name)
    print(f"disabled feed {args.name} in {path}")
    return 0


def _new_feed(args: argparse.Namespace) -> Feed:
    topics = [t for t in (part.strip() for part in args.topics.split(",")) if t]
    try:
        return Feed(
            name=args.name,
            url=args.url,
            topics=tuple(topics),
            project=args.project,
            interval_minutes=args.interval_minutes,
            mode=args.mode,
            retention_days=args.retention_days,
        )
    except ValidationError as exc:
        raise InvalidInput(f"the feed is not valid: {config.first_error(exc)}") from None


def _list(settings: Settings) -> int:
    from kenning.store import Store, connect

    store = Store(connect(settings), settings.key_prefix)
    found = statuses(config.load(settings.resolved_feeds_file), store.feeds)
    if not found:
        print(f"no feeds in {settings.resolved_feeds_file} (`kenning feeds add NAME URL` adds one)")
    for status in found:
        print(line(status))
    return 0


def line(status: FeedStatus) -> str:
    """One feed as `kenning feeds list` prints it."""
    if status.problem is not None:
        return f"{status.name}: ERROR in feeds.yml, disabled: {status.problem}"
    feed, state = status.feed, status.state
    assert feed is not None  # a status has a feed or a problem
    parts = [
        f"{feed.name}: {'enabled' if feed.enabled else 'disabled'}",
        guard.redacted(feed.url),
        f"every {feed.interval_minutes:g} min",
        f"last fetch {iso(state.last_fetch) or 'never'}",
    ]
    if state.last_counts:
        parts.append("last " + ", ".join(f"{k} {v}" for k, v in sorted(state.last_counts.items())))
    if state.failures:
        parts.append(
            f"{state.failures} failure(s) in a row, next attempt {iso(state.next_attempt)}"
        )
    if state.last_error:
        parts.append(f"last error: {state.last_error}")
    if state.last_warning:
        parts.append(f"warning: {state.last_warning}")
    return "; ".join(parts)


def _check(settings: Settings) -> int:
    book = config.load(settings.resolved_feeds_file)
    allowed = guard.allowances(settings.feed_allow)
    for problem in book.problems:
        print(f"ERROR {problem}")
    refused = 0
    for feed in book.feeds:
        try:
            _, host, port = guard.split(feed.url)
            target = guard.check(feed.url, guard.resolve(host, port), allowed)
            print(f"ok    {feed.name}: {target.host} -> {target.address}")
        except FeedError as exc:
            refused += 1
            print(f"ERROR {feed.name}: {exc}")
    print(f"{len(book.feeds)} feed(s) valid, {len(book.problems)} invalid, {refused} refused")
    return 1 if book.problems or refused else 0


def _fetch(settings: Settings, name: str) -> int:
    from kenning_cli.services import open_engine

    engine = open_engine(settings)
    run = engine.feeds.run(engine.feeds.feed(name), force=True)
    print(summary(run))
    return 1 if run.outcome == "failed" else 0


def summary(run: FeedRun) -> str:
    if run.outcome == "failed":
        return f"{run.feed}: failed: {run.error}"
    if run.outcome == "not_modified":
        return f"{run.feed}: not modified since the last fetch (nothing stored)"
    text = (
        f"{run.feed}: {len(run.new)} new, {run.duplicates} already stored, "
        f"{len(run.linked)} linked to a near-duplicate, {run.rejected} rejected"
    )
    extra = [f"warning: {run.warning}"] if run.warning else []
    return "; ".join([text, *extra, *run.notes])
