"""The OAuth server's pure rules: scope parsing, implied scopes, redirect
URIs (RFC 8252), resources."""

from __future__ import annotations

import pytest

from kenning.access.oauth_rules import (
    check_redirect_uri,
    expand,
    normalize_resource,
    parse_scopes,
    redirect_matches,
)
from kenning.core.errors import InvalidInput


def test_scopes_parse_with_stray_whitespace_and_unknown_ones_are_refused() -> None:
    assert parse_scopes("  read \t write  read ") == ["read", "write"]
    assert parse_scopes("read offline_access") == ["read", "offline_access"]
    assert parse_scopes(None) is None
    assert parse_scopes("   ") is None
    with pytest.raises(InvalidInput, match="unknown scope 'root'"):
        parse_scopes("read root")


def test_higher_scopes_imply_the_lower_ones() -> None:
    assert expand(["admin"]) == ["read", "write", "admin"]
    assert expand(["write", "offline_access"]) == ["read", "write", "offline_access"]
    assert expand(["read"]) == ["read"]
    assert expand([]) == []


@pytest.mark.parametrize(
    "uri",
    [
        "https://claude.ai/api/mcp/auth_callback",
        "http://localhost:53682/callback",
        "http://127.0.0.1/cb",
        "http://[::1]:8080/cb",
        "cursor://anysphere.cursor-mcp/oauth/callback",
    ],
)
def test_allowed_redirect_uris(uri: str) -> None:
    assert check_redirect_uri(uri) == uri


@pytest.mark.parametrize(
    ("uri", "message"),
    [
        ("http://evil.example/cb", "non-loopback"),
        ("https://x.example/cb#f", "fragment"),
        ("javascript:alert(1)", "not allowed"),
        ("data:text/html,hi", "not allowed"),
        ("", "1-2000"),
        ("file:///etc/passwd", "not allowed"),
    ],
)
def test_refused_redirect_uris(uri: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        check_redirect_uri(uri)


def test_loopback_redirects_match_on_any_port_and_nothing_else_does() -> None:
    registered = "http://127.0.0.1:53682/callback"
    assert redirect_matches(registered, registered)
    assert redirect_matches(registered, "http://127.0.0.1:61111/callback")
    assert redirect_matches("http://localhost/callback", "http://localhost:4000/callback")
    assert not redirect_matches(registered, "http://127.0.0.1:61111/other")
    assert not redirect_matches(registered, "http://localhost:61111/callback")  # another host name
    assert not redirect_matches(registered, "https://127.0.0.1:61111/callback")
    # exact off loopback
    assert not redirect_matches("https://claude.ai/cb", "https://claude.ai:8443/cb")
    assert redirect_matches(
        "cursor://anysphere.cursor-mcp/oauth/callback",
        "cursor://anysphere.cursor-mcp/oauth/callback",
    )
    assert not redirect_matches(
        "cursor://anysphere.cursor-mcp/oauth/callback", "cursor://evil/oauth/callback"
    )


def test_a_resource_with_or_without_a_trailing_slash_is_the_same() -> None:
    assert (
        normalize_resource("https://Kenning.example.com/mcp/") == "https://kenning.example.com/mcp"
    )
    assert (
        normalize_resource("https://kenning.example.com/mcp") == "https://kenning.example.com/mcp"
    )
    assert normalize_resource("https://kenning.example.com/mcp") != normalize_resource(
        "https://other.example/mcp"
    )
