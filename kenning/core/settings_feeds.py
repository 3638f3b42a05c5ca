"""The feed worker's settings (docs/feeds.md): the feeds file, which hosts a feed may reach, the
bounds of one fetch. Part of ``kenning.core.settings.Settings``."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings


class FeedSettings(BaseSettings):
    """The ``KENNING_`` settings of the feed worker (read through ``Settings``)."""

    feeds_file: Path | None = Field(
        default=None,
        description="The feeds.yml the worker ingests; unset = <data_dir>/feeds.yml.",
    )
    feed_allow: str = Field(
        default="",
        description=(
            "Comma-separated hosts, IPs or CIDRs (optionally :port) a feed may reach although "
            "they are not global addresses, e.g. 10.0.0.5:8080; empty = only global addresses."
        ),
    )
    feed_max_mb: float = Field(
        default=10.0,
        gt=0,
        le=1024,
        description="A feed body larger than this (MiB) is refused, unread past it.",
    )
    feed_timeout_seconds: float = Field(
        default=30.0,
        gt=0,
        le=600,
        description=(
            "Whole-fetch deadline of one feed hop (connect, headers and body), so a slow drip ends."
        ),
    )
    feed_max_redirects: int = Field(
        default=5,
        ge=0,
        le=20,
        description="Redirect hops a feed fetch follows (each checked by the SSRF guard).",
    )
    feed_reload_seconds: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description="How often the worker checks feeds.yml for changes.",
    )
    recall_include_feeds: bool = Field(
        default=True,
        description=(
            "Recall and the briefing include feed articles unless a request says otherwise."
        ),
    )
