"""Feed bytes -> entries. Pure: no network (feedparser is given the bytes, never a URL).

RSS 0.9x/1.0/2.0 and Atom, through ``feedparser.parse(bytes, response_headers=...)``. A "bozo" feed
(not well-formed) keeps whatever parsed and carries the error; one with nothing parsed is a failure.
HTML is reduced to text by a parser that keeps only character data (no markup, no script or style
content). Dates are normalised to epoch seconds and omitted when the feed gives none: never
invented.
"""

from __future__ import annotations

import calendar
import hashlib
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

import feedparser  # type: ignore[import-untyped]  # no stubs; its results are read as Any

from kenning.core.errors import FeedError

EXCERPT_CHARS = 1_500
_SKIPPED = frozenset(("script", "style", "template", "noscript", "iframe", "object", "svg", "math"))
_BLOCKS = frozenset(
    (
        "p",
        "div",
        "br",
        "li",
        "ul",
        "ol",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "tr",
        "blockquote",
        "pre",
        "section",
        "article",
        "table",
        "hr",
    )
)
_PROLOG_BYTES = 65_536
_ROOT = re.compile(rb"<(?![?!])")  # the first element: where the prolog ends
_SUBSET = re.compile(rb"<!DOCTYPE[^>\[]*\[", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class Entry:
    """One article. ``uid``: a stable hash of its GUID (or link), the same across runs and feeds."""

    uid: str
    title: str | None
    link: str | None
    text: str
    published: float | None = None
    enclosures: tuple[str, ...] = ()

    def excerpt(self, limit: int = EXCERPT_CHARS) -> str:
        """The title and the start of the text, cut at a word boundary."""
        body = self.text if len(self.text) <= limit else self.text[:limit].rsplit(" ", 1)[0] + " …"
        return "\n\n".join(part for part in (self.title, body) if part)


@dataclass(frozen=True)
class ParsedFeed:
    title: str | None
    entries: tuple[Entry, ...]
    error: str | None = None  # a bozo feed's problem, when entries still parsed
    skipped: int = 0  # entries with no GUID, link or title: nothing stable to recognise them by


def parse(body: bytes, headers: dict[str, str] | None = None) -> ParsedFeed:
    """The entries of ``body``; raises FeedError when it is not a feed at all, or when it
    declares entities (``declares_entities``)."""
    if declares_entities(body):
        raise FeedError(
            "the feed declares its own entities (a DOCTYPE internal subset): refused, since "
            "expanding them is how billion-laughs and XXE feeds attack a reader",
            hint="a real feed needs no DTD; ask its publisher to drop it",
        )
    wanted = {k: v for k, v in (headers or {}).items() if k in ("content-type", "content-location")}
    result: Any = feedparser.parse(
        body, response_headers=wanted, sanitize_html=True, resolve_relative_uris=False
    )
    error = str(result.get("bozo_exception", "")) if result.get("bozo") else None
    version = result.get("version") or ""
    if not result.entries and (error or not version):
        raise FeedError(
            f"not an RSS or Atom feed: {error or 'no feed elements found'}",
            hint="check that the URL serves the feed itself",
        )
    entries = [entry(raw) for raw in result.entries]
    kept = tuple(e for e in entries if e is not None)
    title = strip_html(str(result.feed.get("title", ""))) or None
    return ParsedFeed(title=title, entries=kept, error=error, skipped=len(entries) - len(kept))


def declares_entities(body: bytes) -> bool:
    """Whether the document's prolog (before its root element) has a DOCTYPE with an internal
    subset or an ENTITY declaration. feedparser would expand or echo them (``&lol9;`` stored as
    content); no RSS or Atom feed needs one. Pure."""
    head = body[:_PROLOG_BYTES]
    root = _ROOT.search(head)
    prolog = head[: root.start()] if root else head
    return bool(_SUBSET.search(prolog) or b"<!ENTITY" in prolog.upper())


def entry(raw: Any) -> Entry | None:
    guid = str(raw.get("id") or "").strip()
    link = str(raw.get("link") or "").strip() or None
    title = strip_html(str(raw.get("title") or "")) or None
    anchor = guid or link or (title and f"title:{title}:{raw.get('published', '')}")
    if not anchor:
        return None
    enclosures = tuple(str(e.get("href")) for e in raw.get("enclosures", []) if e.get("href"))
    return Entry(
        uid=uid(anchor),
        title=title,
        link=link,
        text=text_of(raw),
        published=published(raw),
        enclosures=enclosures,
    )


def uid(anchor: str) -> str:
    return hashlib.sha256(anchor.encode("utf-8")).hexdigest()[:32]


def text_of(raw: Any) -> str:
    """The longest of the entry's content and summary, as plain text."""
    candidates = [str(c.get("value", "")) for c in raw.get("content", [])]
    candidates.append(str(raw.get("summary", "")))
    return max((strip_html(c) for c in candidates), key=len, default="")


def published(raw: Any) -> float | None:
    """Epoch seconds of the entry's publication (or update) date; None when the feed gives none."""
    for name in ("published_parsed", "updated_parsed", "created_parsed"):
        value = raw.get(name)
        if value:
            return float(calendar.timegm(value))
    return None


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.hidden = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:  # noqa: ARG002
        if tag in _SKIPPED:
            self.hidden += 1
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED:
            self.hidden = max(0, self.hidden - 1)
        elif tag in _BLOCKS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.hidden:
            self.parts.append(data)


def strip_html(markup: str) -> str:
    """Plain text of an HTML fragment: character data only, spaces collapsed, paragraphs kept."""
    parser = _Text()
    parser.feed(markup)
    parser.close()
    return clean("".join(parser.parts))


def clean(text: str) -> str:
    """No control characters, runs of spaces collapsed, at most one blank line in a row."""
    text = _CONTROL.sub("", text)
    lines = [" ".join(line.split()) for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()
