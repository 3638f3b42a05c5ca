"""The one module that fetches a feed over the network (httpx; never feedparser's own fetcher, which
follows redirects anywhere, opens file:// and has no timeout).

Each hop goes through the SSRF guard and connects to the address the guard checked: the request URL
names that IP, the Host header and the TLS SNI/certificate check name the host, so nothing resolves
the name a second time. Redirects are followed by hand, up to KENNING_FEED_MAX_REDIRECTS hops. A
conditional GET (ETag / Last-Modified) answered 304 reads no body. The body is streamed and refused
past KENNING_FEED_MAX_MB, and every hop has one deadline, so a slow drip ends too.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from urllib.parse import urljoin

import httpx

from kenning import __version__
from kenning.core.errors import FeedError
from kenning.core.settings import Settings
from kenning.knowledge.feeds import guard

USER_AGENT = f"Kenning/{__version__} (feed ingestion; +https://github.com/kenning)"
ACCEPT = (
    "application/rss+xml, application/atom+xml, application/rdf+xml, application/xml;q=0.9, "
    "text/xml;q=0.9, */*;q=0.1"
)
_FEED_TYPES = ("xml", "rss", "atom", "rdf")
_REDIRECTS = (301, 302, 303, 307, 308)
Resolver = Callable[[str, int], tuple[guard.Address, ...]]


@dataclass(frozen=True)
class Conditional:
    """The validators of the last good fetch, sent back so an unchanged feed answers 304."""

    etag: str | None = None
    last_modified: str | None = None

    def headers(self) -> dict[str, str]:
        out = {}
        if self.etag:
            out["If-None-Match"] = self.etag
        if self.last_modified:
            out["If-Modified-Since"] = self.last_modified
        return out


@dataclass(frozen=True)
class Fetched:
    """A fetch that worked: 200 with a body, or 304 (``modified`` False, empty body)."""

    url: str
    modified: bool
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    hops: int = 0

    @property
    def validators(self) -> Conditional:
        return Conditional(self.headers.get("etag"), self.headers.get("last-modified"))


class Fetcher:
    """Built once from the settings; ``resolver`` is the one DNS lookup per hop, ``verify`` the TLS
    trust (the system's by default; tests pass their own)."""

    def __init__(
        self,
        settings: Settings,
        resolver: Resolver = guard.resolve,
        verify: ssl.SSLContext | bool = True,
    ) -> None:
        self.allowed = guard.allowances(settings.feed_allow)
        self.max_bytes = int(settings.feed_max_mb * 1024 * 1024)
        self.deadline = settings.feed_timeout_seconds
        self.max_redirects = settings.feed_max_redirects
        self.resolver = resolver
        self.verify = verify

    def fetch(self, url: str, conditional: Conditional = Conditional()) -> Fetched:
        """The feed at ``url`` (redirects followed, each hop checked by the guard). A FeedError
        never shows the URL's credentials (``guard.redacted``)."""
        try:
            return self._fetch(url, conditional)
        except FeedError as exc:
            raise FeedError(
                guard.redacted(exc.message),
                hint=guard.redacted(exc.hint) if exc.hint else None,
                retry_after=exc.retry_after,
            ) from None

    def _fetch(self, url: str, conditional: Conditional) -> Fetched:
        seen: set[str] = set()
        with httpx.Client(follow_redirects=False, trust_env=False, verify=self.verify) as client:
            for hop in range(self.max_redirects + 1):
                if url in seen:
                    raise FeedError(
                        f"redirect loop at {url}", hint="the feed's server redirects in a circle"
                    )
                seen.add(url)
                _, host, port = guard.split(url)
                target = guard.check(url, self.resolver(host, port), self.allowed)
                result = self._hop(client, target, conditional, hop)
                if isinstance(result, Fetched):
                    return result
                url = result
        raise FeedError(
            f"more than {self.max_redirects} redirects", hint="use the feed's final URL"
        )

    def _hop(
        self, client: httpx.Client, target: guard.Target, conditional: Conditional, hop: int
    ) -> Fetched | str:
        """One request: a result, or the next URL to try."""
        started = time.monotonic()
        headers = {
            "Host": target.host_header,
            "User-Agent": USER_AGENT,
            "Accept": ACCEPT,
            **conditional.headers(),
        }
        extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
        timeout = httpx.Timeout(self.deadline)
        try:
            with client.stream(
                "GET", target.pinned_url(), headers=headers, extensions=extensions, timeout=timeout
            ) as response:
                return self._answer(target, response, started, hop)
        except httpx.TimeoutException:
            raise FeedError(
                f"{target.url} did not answer within {self.deadline:g} s",
                hint="KENNING_FEED_TIMEOUT_SECONDS bounds each fetch",
            ) from None
        except httpx.HTTPError as exc:
            raise FeedError(f"fetching {target.url} failed: {type(exc).__name__}: {exc}") from None

    def _answer(
        self, target: guard.Target, response: httpx.Response, started: float, hop: int
    ) -> Fetched | str:
        status = response.status_code
        headers = {k.lower(): v for k, v in response.headers.items()}
        if status in _REDIRECTS and "location" in headers:
            return urljoin(target.url, headers["location"])
        if status == 304:
            return Fetched(target.url, modified=False, headers=headers, hops=hop)
        if status >= 400 or status != 200:
            raise _http_error(target.url, status, headers)
        _check_type(target.url, headers.get("content-type", ""))
        body = self._body(target.url, response, headers, started)
        return Fetched(target.url, modified=True, body=body, headers=headers, hops=hop)

    def _body(
        self, url: str, response: httpx.Response, headers: dict[str, str], started: float
    ) -> bytes:
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise _too_big(url, self.max_bytes)
        chunks: list[bytes] = []
        size = 0
        for chunk in response.iter_bytes():  # decoded: the cap bounds what a gzip bomb unpacks to
            size += len(chunk)
            if size > self.max_bytes:
                raise _too_big(url, self.max_bytes)
            if time.monotonic() - started > self.deadline:
                raise FeedError(
                    f"{url} sent its body too slowly (over {self.deadline:g} s)",
                    hint="KENNING_FEED_TIMEOUT_SECONDS bounds each fetch",
                )
            chunks.append(chunk)
        return b"".join(chunks)


def _too_big(url: str, limit: int) -> FeedError:
    return FeedError(
        f"{url} is larger than {limit / 1024 / 1024:g} MiB; not read further",
        hint="KENNING_FEED_MAX_MB raises the limit",
    )


def _check_type(url: str, content_type: str) -> None:
    kind = content_type.split(";", maxsplit=1)[0].strip().lower()
    if kind and kind != "text/plain" and not any(word in kind for word in _FEED_TYPES):
        raise FeedError(
            f"{url} answered {kind!r}, not a feed",
            hint="a web page often links its feed (<link rel=alternate>); use that URL",
        )


def _http_error(url: str, status: int, headers: dict[str, str]) -> FeedError:
    retry_after = retry_after_seconds(headers.get("retry-after"))
    waited = f"; it asks to wait {retry_after:g} s" if retry_after is not None else ""
    return FeedError(f"{url} answered HTTP {status}{waited}", retry_after=retry_after)


def retry_after_seconds(value: str | None, now: float | None = None) -> float | None:
    """Retry-After in seconds (a number of seconds or an HTTP date); None when absent or bad."""
    if not value:
        return None
    if value.strip().isdigit():
        return float(value.strip())
    try:
        when = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))
