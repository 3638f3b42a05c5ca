"""The SSRF rule of every feed hop: http(s) only, the host resolved ONCE, every address global
unless the allowlist names it, and the connection made to the address checked here
(``Target.address``).

Pure apart from ``resolve`` (one getaddrinfo). "Global" means the address is publicly routable:
private, loopback, link-local (169.254.169.254, the cloud metadata address, is link-local),
multicast, reserved, unspecified and shared (100.64/10) addresses are refused, and so are IPv6 forms
that carry an IPv4 address (mapped ::ffff:a.b.c.d, 6to4 2002::/16, Teredo, NAT64 64:ff9b::/96) whose
IPv4 part is not global.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from kenning.core.errors import FeedError, InvalidInput

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
DEFAULT_PORTS = {"http": 80, "https": 443}
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


@dataclass(frozen=True)
class Allowance:
    """One allowlist entry: a network or a host name, optionally limited to one port."""

    network: Network | None
    host: str | None
    port: int | None

    def admits(self, host: str, address: Address, port: int) -> bool:
        if self.port is not None and self.port != port:
            return False
        if self.network is not None:
            return address in self.network
        return host == self.host


@dataclass(frozen=True)
class Target:
    """A URL checked by the guard: where to connect (``address``) and what to call the host."""

    url: str
    scheme: str
    host: str
    port: int
    address: Address

    @property
    def host_header(self) -> str:
        name = f"[{self.host}]" if ":" in self.host else self.host
        return name if DEFAULT_PORTS[self.scheme] == self.port else f"{name}:{self.port}"

    def pinned_url(self) -> str:
        """The URL with the checked address in place of the host name: nothing resolves it again."""
        parts = urlsplit(self.url)
        at = f"[{self.address}]" if self.address.version == 6 else str(self.address)
        path = parts.path or "/"
        query = f"?{parts.query}" if parts.query else ""
        return f"{self.scheme}://{at}:{self.port}{path}{query}"


def allowances(text: str) -> tuple[Allowance, ...]:
    """KENNING_FEED_ALLOW: comma-separated host names, IPs or CIDRs, each with an optional port."""
    out = []
    for raw in (part.strip() for part in text.split(",")):
        if raw:
            out.append(_allowance(raw))
    return tuple(out)


def _allowance(raw: str) -> Allowance:
    entry, port = raw, None
    bracketed = entry.startswith("[") and "]:" in entry
    if bracketed or (entry.count(":") == 1 and entry.rsplit(":", 1)[1].isdigit()):
        entry, _, digits = entry.rpartition(":")
        port = int(digits)
    entry = entry.strip("[]").lower()
    try:
        return Allowance(ipaddress.ip_network(entry, strict=False), None, port)
    except ValueError:
        if not entry or any(c in entry for c in "/@ "):
            raise InvalidInput(
                f"KENNING_FEED_ALLOW entry {raw!r} is not a host, IP or CIDR",
                hint="e.g. 10.0.0.0/8, feeds.internal:8080, 192.168.1.4",
            ) from None
        return Allowance(None, entry, port)


def split(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL; anything else is refused."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS:
        raise FeedError(f"refused {url!r}: only http and https URLs are fetched")
    if parts.username or parts.password:
        raise FeedError(f"refused {url!r}: credentials in a feed URL are not sent")
    try:
        port = parts.port or DEFAULT_PORTS[scheme]
    except ValueError:
        raise FeedError(f"refused {url!r}: the port is not a number from 1 to 65535") from None
    if not parts.hostname:
        raise FeedError(f"refused {url!r}: the URL has no host")
    return scheme, parts.hostname.lower().rstrip("."), port


def resolve(host: str, port: int) -> tuple[Address, ...]:
    """Every address ``host`` resolves to, once. An IP literal is its own single address."""
    try:
        return (ipaddress.ip_address(host),)
    except ValueError:
        pass
    try:
        rows = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:
        raise FeedError(
            f"cannot resolve {host!r}: {exc}", hint="check the feed URL's host name"
        ) from None
    addresses = {ipaddress.ip_address(str(row[4][0]).split("%")[0]) for row in rows}
    return tuple(sorted(addresses, key=lambda a: (a.version, int(a))))


def check(url: str, addresses: tuple[Address, ...], allowed: tuple[Allowance, ...]) -> Target:
    """The target to connect to when EVERY address of the host is global or allowed; else refuse."""
    scheme, host, port = split(url)
    if not addresses:
        raise FeedError(f"refused {url!r}: {host} has no address")
    for address in addresses:
        if not is_public(address) and not any(a.admits(host, address, port) for a in allowed):
            raise FeedError(
                f"refused {url!r}: {host} resolves to {address}, not a global address",
                hint="a feed may reach only public addresses; KENNING_FEED_ALLOW "
                "can name an internal host or network (docs/feeds.md)",
            )
    return Target(url=url, scheme=scheme, host=host, port=port, address=addresses[0])


def is_public(address: Address) -> bool:
    """Publicly routable, including the IPv4 address inside an IPv6 form that carries one."""
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        return is_public(embedded)
    return address.is_global and not (
        address.is_multicast
        or address.is_reserved
        or address.is_private
        or address.is_loopback
        or address.is_link_local
        or address.is_unspecified
    )


def _embedded_ipv4(address: Address) -> ipaddress.IPv4Address | None:
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/?#@\s]*@")


def redacted(text: str) -> str:
    """``text`` with the credentials of every URL in it (``user:password@``) replaced by ``***@``:
    what an error message, a log line or `kenning feeds list` may show. Pure."""
    return _USERINFO.sub(r"\1***@", text)
