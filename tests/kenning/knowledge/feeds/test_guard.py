"""The SSRF rule, on plain addresses: every address global, or named by the allowlist."""

from __future__ import annotations

import ipaddress
import re

import pytest

from kenning.core.errors import FeedError, InvalidInput
from kenning.knowledge.feeds import guard

PUBLIC = ipaddress.ip_address("93.184.215.14")
REFUSED = [
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.9",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.251",
    "240.0.0.1",
    "255.255.255.255",
    "::1",
    "fe80::1",
    "fd00:ec2::254",
    "ff02::1",
    "::",
    "::ffff:127.0.0.1",
    "::ffff:169.254.169.254",
    "2002:7f00:1::",
    "64:ff9b::a9fe:a9fe",
    "2001:0:4136:e378:8000:63bf:f5ff:fffe",
]


def _addresses(*values: str) -> tuple[guard.Address, ...]:
    return tuple(ipaddress.ip_address(v) for v in values)


def test_a_public_address_is_the_target_to_connect_to() -> None:
    target = guard.check("https://feeds.example.org/rss?x=1", (PUBLIC,), ())
    assert (target.host, target.port, target.address) == ("feeds.example.org", 443, PUBLIC)
    assert target.pinned_url() == "https://93.184.215.14:443/rss?x=1"
    assert target.host_header == "feeds.example.org"


@pytest.mark.parametrize("address", REFUSED)
def test_every_non_global_form_is_refused(address: str) -> None:
    assert guard.is_public(PUBLIC)  # positive control
    assert not guard.is_public(ipaddress.ip_address(address))
    with pytest.raises(FeedError, match="not a global address"):
        guard.check("http://feeds.example.org/rss", _addresses(address), ())


def test_one_private_address_among_public_ones_refuses_the_host() -> None:
    with pytest.raises(FeedError, match=re.escape("resolves to 10.0.0.7")):
        guard.check("http://feeds.example.org/rss", _addresses("93.184.215.14", "10.0.0.7"), ())


@pytest.mark.parametrize(
    "url",
    [
        "file:///etc/passwd",
        "ftp://example.org/feed",
        "gopher://x/",
        "http://user:pw@example.org/feed",
        "http:///feed",
        "http://x:99999/",
    ],
)
def test_only_plain_http_and_https_urls_pass(url: str) -> None:
    with pytest.raises(FeedError, match="refused"):
        guard.split(url)


def test_the_allowlist_admits_a_named_network_host_or_port_and_nothing_else() -> None:
    allowed = guard.allowances("10.0.0.0/8, 127.0.0.1:8080, feeds.internal, [::1]:9000")
    internal = _addresses("10.9.8.7")
    assert guard.check("http://wiki.corp/rss", internal, allowed).address == internal[0]
    assert guard.check("http://127.0.0.1:8080/rss", _addresses("127.0.0.1"), allowed).port == 8080
    assert guard.check("http://feeds.internal/rss", _addresses("192.168.5.5"), allowed).port == 80
    assert (
        guard.check("http://[::1]:9000/rss", _addresses("::1"), allowed).pinned_url()
        == "http://[::1]:9000/rss"
    )
    for url, address in (
        ("http://127.0.0.1:8081/rss", "127.0.0.1"),
        ("http://other.internal/", "192.168.5.5"),
        ("http://169.254.169.254/", "169.254.169.254"),
    ):
        with pytest.raises(FeedError, match="not a global address"):
            guard.check(url, _addresses(address), allowed)


def test_a_bad_allowlist_entry_is_an_error_with_a_hint() -> None:
    assert guard.allowances(" , ") == ()
    with pytest.raises(InvalidInput, match="KENNING_FEED_ALLOW"):
        guard.allowances("10.0.0.0/99")


def test_resolve_looks_a_name_up_once_and_an_ip_literal_not_at_all() -> None:
    assert guard.resolve("127.0.0.1", 80) == _addresses("127.0.0.1")
    assert ipaddress.ip_address("127.0.0.1") in guard.resolve("localhost", 80)
    with pytest.raises(FeedError, match="cannot resolve"):
        guard.resolve("no-such-host.invalid", 80)
