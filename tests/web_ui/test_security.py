"""Login, sessions, roles, CSRF, origin checks and security headers, through
HTTP against the real app."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.routing import Route
from starlette.testclient import TestClient

from kenning.access.oauth import ClientInfo, OAuth
from kenning.core.settings import Settings
from kenning.engine import Engine
from tests.web_ui.conftest import PASSWORD, Dashboard, login, web_settings
from web_ui.app import build_app
from web_ui.guard import COOKIE

# The lowest role each guarded route needs. A route missing here fails test_every_route_is_listed.
NEEDS: dict[tuple[str, str], str] = {
    ("GET", "/"): "viewer",
    ("GET", "/memories"): "viewer",
    ("GET", "/memory"): "viewer",
    ("GET", "/search"): "viewer",
    ("GET", "/contradictions"): "viewer",
    ("GET", "/duplicates"): "viewer",
    ("GET", "/suppressions"): "viewer",
    ("GET", "/experience"): "viewer",
    ("GET", "/projects"): "viewer",
    ("GET", "/audit"): "viewer",
    ("GET", "/telemetry"): "viewer",
    ("GET", "/backups"): "admin",
    ("GET", "/backups/file"): "admin",
    ("GET", "/backups/dry-run"): "admin",
    ("GET", "/settings"): "admin",
    ("GET", "/skills"): "viewer",
    ("GET", "/feeds"): "viewer",
    ("GET", "/queue"): "viewer",
    ("GET", "/accounts"): "admin",
    ("GET", "/connections"): "admin",
    ("POST", "/skills/approve"): "admin",
    ("POST", "/skills/reject"): "admin",
    ("POST", "/accounts"): "admin",
    ("POST", "/connections"): "admin",
    ("POST", "/duplicates/keep"): "editor",
    ("POST", "/skills/write"): "editor",
    ("POST", "/memories/bulk"): "editor",
    ("POST", "/memory"): "editor",
    ("POST", "/queue"): "editor",
    ("POST", "/contradictions"): "editor",
    ("POST", "/duplicates"): "editor",
    ("POST", "/suppressions"): "editor",
    ("POST", "/suppressions/lift"): "editor",
    ("POST", "/backups"): "admin",
    ("POST", "/backups/upload"): "admin",
    ("POST", "/backups/restore"): "admin",
    ("POST", "/logout"): "viewer",
}
OPEN = {("GET", "/login"), ("POST", "/login"), ("GET", "/healthz"), ("GET", "/metrics")}
BELOW = {"editor": "viewer", "admin": "editor"}


def test_every_route_is_listed(web: Dashboard) -> None:
    app = build_app(web.engine, web.settings, web.logins)
    served = {
        (method, route.path)
        for route in app.routes
        if isinstance(route, Route)
        for method in route.methods or ()
        if method != "HEAD"
    }
    assert served == set(NEEDS) | OPEN


@pytest.mark.parametrize(("method", "path"), sorted(NEEDS))
def test_every_page_needs_a_login(web: Dashboard, method: str, path: str) -> None:
    anonymous = web.client(None)
    response = anonymous.request(method, path, data={"csrf": "x"} if method == "POST" else None)
    assert response.status_code == 303
    assert response.headers["location"].startswith("/login?next=")
    api = anonymous.request(method, path, headers={"accept": "application/json"})
    assert api.status_code == 401
    assert api.json()["error"]["code"] == "login_required"


@pytest.mark.parametrize(
    ("method", "path"), sorted(k for k, role in NEEDS.items() if role != "viewer")
)
def test_roles_are_enforced(web: Dashboard, method: str, path: str) -> None:
    role = NEEDS[(method, path)]
    for who, refused in ((BELOW[role], True), (role, False)):
        client = web.client(who)
        data = web.form(client) if method == "POST" else None
        response = client.request(method, path, data=data)
        if refused:
            assert response.status_code == 403, response.text
            assert f"this needs the {role} role; you are signed in as {who}" in response.text
        else:  # positive control: the same request with the role gets past the guard
            assert response.status_code != 403, response.text
            assert "role; you are signed in as" not in response.text


def test_a_wrong_password_shows_the_form_again_and_sets_no_session(web: Dashboard) -> None:
    client = web.client(None)
    response = login(client, "editor", "not the password")
    assert response.status_code == 401
    assert "Wrong user name or password" in response.text
    assert COOKIE not in client.cookies
    assert login(client, "editor").status_code == 303  # positive control: the right password works
    assert COOKIE in client.cookies
    failed = web.engine.history.audit_log(action="login_failed").public()["events"]
    assert [e["details"]["username"] for e in failed] == ["editor"]


def test_the_session_cookie_is_httponly_lax_and_not_secure_over_plain_http(web: Dashboard) -> None:
    cookie = login(web.client(None), "viewer").headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE}=")
    assert "HttpOnly" in cookie
    assert "SameSite=lax" in cookie
    assert "Secure" not in cookie


def test_behind_tls_the_session_cookie_is_secure(
    web: Dashboard, settings: Settings, tmp_path: Path
) -> None:
    tls = Dashboard(
        web.engine,
        web_settings(settings, tmp_path, web_public_url="https://kenning.example.org"),
        base="https://kenning.example.org",
    )
    cookie = login(tls.client(None), "viewer").headers["set-cookie"]
    assert "Secure" in cookie
    assert "HttpOnly" in cookie


def test_logout_ends_the_session_on_the_server(web: Dashboard) -> None:
    client = web.client("editor")
    sid = client.cookies[COOKIE]
    thief = web.app_client()
    thief.cookies.set(COOKIE, sid)
    # positive control: the copied cookie works before logout
    assert thief.get("/").status_code == 200
    assert client.post("/logout", data=web.form(client)).status_code == 303
    assert web.logins.current(sid) is None
    after = thief.get("/")
    assert after.status_code == 303
    assert after.headers["location"].startswith("/login")


def test_a_disabled_account_loses_its_session(web: Dashboard) -> None:
    client = web.client("editor")
    assert client.get("/").status_code == 200
    web.logins.accounts.disable("editor", actor="pytest")
    assert client.get("/").status_code == 303


def test_login_only_redirects_within_the_site(web: Dashboard) -> None:
    for target, expected in (
        ("//evil.example/x", "/"),
        ("https://evil.example", "/"),
        ("/audit", "/audit"),
    ):
        client = web.client(None)
        client.get("/login")
        token = client.cookies["kenning_login"]
        response = client.post(
            "/login",
            data={"username": "viewer", "password": PASSWORD, "login_token": token, "next": target},
        )
        assert response.headers["location"] == expected


def test_the_login_form_needs_its_own_token(web: Dashboard) -> None:
    client = web.client(None)
    client.get("/login")
    refused = client.post(
        "/login", data={"username": "viewer", "password": PASSWORD, "login_token": "forged"}
    )
    assert refused.status_code == 403
    assert COOKIE not in client.cookies


def test_csrf_token_is_required_for_every_change(web: Dashboard, engine: Engine) -> None:
    client = web.client("editor")
    fields = {"term": "celery", "reason": "we moved to arq", "reviewed": "yes"}
    for sent in ({}, {"csrf": "forged-token"}):
        refused = client.post("/suppressions", data={**fields, **sent})
        assert refused.status_code == 403
        assert "security token is missing or stale" in refused.text
        assert engine.suppressions.list_suppressions() == []
    accepted = client.post("/suppressions", data=web.form(client, **fields))  # positive control
    assert accepted.status_code == 200, accepted.text
    assert [s.suppression.term for s in engine.suppressions.list_suppressions()] == ["celery"]


def test_a_revoke_on_the_connections_page_needs_the_csrf_token(
    web: Dashboard, engine: Engine
) -> None:
    oauth = OAuth(engine.store, engine.ctx.clock, web.logins.accounts)
    oauth.register(
        ClientInfo("c1", "Cursor", ("http://localhost/cb",), "read", "none", (), 1.0, "", {}),
        ip="10.0.0.1",
    )
    client = web.client("admin")
    fields = {"do": "revoke-client", "client_id": "c1", "reason": "not ours"}
    for sent in ({}, {"csrf": "forged-token"}):
        refused = client.post("/connections", data={**fields, **sent})
        assert refused.status_code == 403
        assert "security token is missing or stale" in refused.text
        assert oauth.client("c1") is not None
    accepted = client.post("/connections", data=web.form(client, "/connections", **fields))
    assert accepted.status_code == 200, accepted.text  # the positive control
    assert oauth.client("c1") is None


def test_forms_from_another_site_are_refused(web: Dashboard, engine: Engine) -> None:
    client = web.client("editor")
    fields = web.form(client, term="celery", reason="we moved to arq", reviewed="yes")
    for headers in (
        {"origin": "http://evil.example"},
        {"sec-fetch-site": "cross-site"},
        {"origin": "null"},
    ):
        refused = client.post("/suppressions", data=fields, headers=headers)
        assert refused.status_code == 403, headers
        assert engine.suppressions.list_suppressions() == []
    same = client.post(
        "/suppressions",
        data=fields,
        headers={"origin": "http://testserver", "sec-fetch-site": "same-origin"},
    )
    assert same.status_code == 200, same.text  # positive control: the dashboard's own origin
    assert [s.suppression.term for s in engine.suppressions.list_suppressions()] == ["celery"]


@pytest.mark.parametrize("path", ["/", "/login", "/memories?namespace=nope", "/healthz"])
def test_security_headers_on_every_response(web: Dashboard, path: str) -> None:
    response = web.client("viewer").get(path)
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp
    assert "unsafe-inline" not in csp
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "same-origin"
    assert response.headers["x-frame-options"] == "DENY"


def test_pages_carry_no_inline_script(web: Dashboard) -> None:
    page = web.client("admin").get("/").text
    assert '<script src="/static/app.js"' in page
    assert "<script>" not in page
    assert " style=" not in page
    assert " onclick=" not in page


def test_a_client_without_a_valid_cookie_value_is_not_logged_in(web: Dashboard) -> None:
    client: TestClient = web.app_client()
    client.cookies.set(COOKIE, "x" * 300)
    assert client.get("/").status_code == 303
