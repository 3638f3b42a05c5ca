"""Dashboard fixtures: the real app (``build_app``) against the test's engine, with real accounts.

    def test_something(web: Dashboard) -> None:
        editor = web.client("editor")                 # logged in as the editor (a real login)
        page = editor.get("/memories")
        done = editor.post("/suppressions", data=web.form(editor, "/suppressions", term=..., reason=...))

One account per role (``viewer``, ``editor``, ``admin``; password ``PASSWORD``). ``web.form`` reads
the CSRF token from a page the way a browser's form carries it. Backups go to
the test's own directory.
"""  # noqa: E501

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import valkey
from argon2 import PasswordHasher
from starlette.testclient import TestClient

from kenning.access.accounts import Accounts
from kenning.access.sessions import Sessions
from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder
from kenning.store import connect
from tests.conftest import free_port, make_settings
from tests.feeds_server import FeedServer, feed_server  # noqa: F401 (a fixture of the feeds page's tests)
from web_ui.app import build_app
from web_ui.sessions import Logins

PASSWORD = "correct horse battery"
ROLES = ("viewer", "editor", "admin")
CSRF = re.compile(r'name="csrf" value="([^"]+)"')
BASE = "http://testserver"
# argon2 at its lowest cost: the tests exercise logins, not the hash's strength (the
# product keeps the defaults)
FAST_HASHER = PasswordHasher(time_cost=1, memory_cost=8, parallelism=1)


def web_settings(settings: Settings, tmp_path: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "key_prefix": settings.key_prefix,
        "backup_dir": tmp_path / "backups",
        "web_port": free_port(),
    }
    values.update(overrides)
    return make_settings(settings.data_dir, settings.valkey_port, **values)


def fast_logins(engine: Engine, settings: Settings) -> Logins:
    """The dashboard's real logins, with accounts that hash passwords cheaply."""
    accounts = Accounts(engine.store, engine.ctx.clock, hasher=FAST_HASHER)
    return Logins(
        accounts,
        Sessions(engine.store, engine.ctx.clock, accounts),
        ttl_seconds=int(settings.web_session_hours * 3600),
    )


@dataclass
class Dashboard:
    engine: Engine
    settings: Settings
    base: str = BASE
    clients: list[TestClient] = field(default_factory=list)

    @property
    def logins(self) -> Logins:
        return fast_logins(self.engine, self.settings)

    def app_client(self) -> TestClient:
        client = TestClient(
            build_app(self.engine, self.settings, self.logins),
            base_url=self.base,
            follow_redirects=False,
            raise_server_exceptions=False,
        )
        self.clients.append(client)
        return client

    def client(self, role: str | None) -> TestClient:
        """A new browser-like client, logged in as the account of ``role`` (None: not logged in)."""
        client = self.app_client()
        if role is not None:
            response = login(client, role)
            assert response.status_code == 303, response.text
        return client

    @staticmethod
    def csrf(client: TestClient, path: str = "/") -> str:
        page = client.get(path)
        assert page.status_code == 200, page.text
        found = CSRF.search(page.text)
        assert found is not None, f"no CSRF token on {path}"
        return found.group(1)

    def form(self, client: TestClient, path: str = "/", **fields: Any) -> dict[str, Any]:
        return {"csrf": self.csrf(client, path), **fields}


def login(client: TestClient, username: str, password: str = PASSWORD) -> Any:
    page = client.get("/login")
    token = client.cookies.get("kenning_login")
    assert page.status_code == 200
    assert token
    return client.post(
        "/login",
        data={"username": username, "password": password, "login_token": token, "next": "/"},
    )


def make_accounts(engine: Engine) -> None:
    accounts = Accounts(engine.store, engine.ctx.clock, hasher=FAST_HASHER)
    for role in ROLES:
        accounts.create(role, PASSWORD, role, actor="pytest")


@pytest.fixture
def settings(settings: Settings, tmp_path: Path) -> Settings:
    """The test's settings with a backup directory of its own (the shared data
    directory is every test's)."""
    return make_settings(
        settings.data_dir,
        settings.valkey_port,
        key_prefix=settings.key_prefix,
        backup_dir=tmp_path / "backups",
    )


@pytest.fixture
def web(engine: Engine, settings: Settings, tmp_path: Path) -> Iterator[Dashboard]:
    make_accounts(engine)
    dashboard = Dashboard(engine, web_settings(settings, tmp_path))
    yield dashboard
    for client in dashboard.clients:
        client.close()


@pytest.fixture
def doomed_valkey(tmp_path: Path) -> Iterator[EmbeddedValkey]:
    """A Valkey of this test's own, so the test can stop it mid-session."""
    with EmbeddedValkey(make_settings(tmp_path / "doomed", free_port())) as server:
        yield server


@pytest.fixture
def doomed_web(
    doomed_valkey: EmbeddedValkey, embedder: Embedder, tmp_path: Path
) -> Iterator[Dashboard]:
    """The dashboard over ``doomed_valkey`` (stop that to see the pages during an outage)."""
    settings = doomed_valkey.settings
    engine = Engine.open(settings, connect(settings), embedder, clock=ManualClock(1_790_000_000.0))
    make_accounts(engine)
    dashboard = Dashboard(engine, web_settings(settings, tmp_path))
    yield dashboard
    for client in dashboard.clients:
        client.close()


def remember(engine: Engine, content: str, project: str = "alpha", **extra: Any) -> str:
    result = engine.memories.remember(
        Draft(content=content, project=project, **extra), actor="pytest"
    )
    assert result.status == "stored", result
    return result.key


def contradiction(engine: Engine) -> tuple[str, str, str]:
    """Two memories the engine flags as contradicting; (record id, key a, key b)."""
    a = remember(engine, "Always use pickle for the cache files of the build service")
    b = remember(engine, "Never use pickle for the cache files of the build service")
    records, _ = engine.contradictions.listing(status="open", project="alpha")
    assert len(records) == 1
    assert {records[0].a, records[0].b} == {a, b}
    return records[0].id, records[0].a, records[0].b


def duplicates(engine: Engine) -> tuple[str, str]:
    """Two near-duplicate memories (remembered with allow_duplicate); (key 1, key 2)."""
    first = remember(engine, "The staging database is refreshed from production every Sunday night")
    second = engine.memories.remember(
        Draft(
            content="The staging database is refreshed from production every Sunday night.",
            project="alpha",
        ),
        actor="pytest",
        allow_duplicate=True,
    ).key
    clusters = engine.duplicates.find("knowledge").clusters
    assert len(clusters) == 1
    assert {m["key"] for m in clusters[0].members} == {first, second}
    return first, second


FEEDS = """feeds:
  - name: python-news
    url: {ok}
    topics: [python]
  - name: broken
    url: {failing}
  - name: Bad Name
    url: https://example.org/rss
"""


@pytest.fixture
def feeds_web(
    settings: Settings,
    client: valkey.Valkey,
    embedder: Embedder,
    clock: ManualClock,
    feed_server: FeedServer,  # noqa: F811
    tmp_path: Path,
) -> Iterator[Dashboard]:
    """The dashboard over an engine whose feeds.yml has a good feed, a failing one and an invalid
    entry, all served by the local feed server."""
    feeds_file = tmp_path / "feeds.yml"
    feeds_file.write_text(
        FEEDS.format(ok=feed_server.url("/rss2.xml"), failing=feed_server.url("/error.xml"))
    )
    tuned = make_settings(
        settings.data_dir,
        settings.valkey_port,
        key_prefix=settings.key_prefix,
        feed_allow=feed_server.allow,
        feed_timeout_seconds=2.0,
        feeds_file=feeds_file,
    )
    engine = Engine.open(tuned, client, embedder, clock=clock)
    make_accounts(engine)
    dashboard = Dashboard(engine, web_settings(tuned, tmp_path))
    yield dashboard
    for web_client in dashboard.clients:
        web_client.close()
