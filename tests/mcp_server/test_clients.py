"""Third-party MCP clients connect to Kenning, each a real implementation and none of them ours:
the official Python SDK's OAuth client with its browser step in Chromium; `mcp-remote` (what Claude
Desktop users run for a remote server) as a stdio proxy whose $BROWSER is scripts/oauth_login.py;
the TypeScript SDK's client with its OAuth provider; Claude Code's CLI with a bearer token (`claude
mcp list`, and `claude -p` whose model is a scripted local stand-in). Each lists the tools, stores
a memory and recalls it.

The node packages are pinned in tests/clients (package.json, package-lock.json); `.ci/run` installs
them with `npm ci --prefix tests/clients`. Without them these tests fail, saying so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from mcp_types import CallToolResult
from playwright.async_api import Browser
from pydantic import AnyUrl

from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.store import Store
from tests.conftest import free_port
from tests.mcp_server.browser import (
    LocalSite,
    chromium_context,
    connect,
    serving,
    shots,  # noqa: F401 (the fixture)
)
from tests.mcp_server.model_fake import ScriptedModel
from tests.mcp_server.model_fake import serving as serving_model
from tests.mcp_server.oauth_kit import PASSWORD, Memory, OAuthKit, start_oauth

ROOT = Path(__file__).resolve().parents[2]
CLIENTS = ROOT / "tests" / "clients"
LOGIN_SCRIPT = ROOT / "scripts" / "oauth_login.py"
FACT = "The staging database is rebuilt from the nightly snapshot at 03:00 UTC"
QUESTION = "when is the staging database rebuilt?"


@pytest.fixture
def kit(engine: Engine, settings: Settings) -> Iterator[OAuthKit]:
    started = start_oauth(engine, settings)
    yield started
    started.service.stop()


def installed(package_path: str) -> Path:
    """A file of the pinned node packages; the test fails (never skips) without node or them."""
    path = CLIENTS / "node_modules" / package_path
    if shutil.which("node") is None or not path.exists():
        pytest.fail(
            f"{path.relative_to(ROOT)} is missing: node and the pinned clients are needed "
            "(run `npm ci --prefix tests/clients`; .ci/run does)"
        )
    return path


def browser_env(home: Path) -> dict[str, str]:
    """A client's environment: its own HOME, and scripts/oauth_login.py as the browser it opens
    (with this virtualenv's python, which has Playwright, first on PATH)."""
    return {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(home),
        "BROWSER": str(LOGIN_SCRIPT),
        "OAUTH_LOGIN_USER": "alice",
        "OAUTH_LOGIN_PASSWORD": PASSWORD,
    }


def audited_as_alice(kit: OAuthKit, key: str) -> bool:
    events = Store(
        kit.service.runtime.engine.ctx.store.client, kit.settings.key_prefix
    ).audit.recent(limit=50)
    return any(e.actor == "user:alice" and e.key == key for e in events)


def structured(result: CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict), result.content
    return result.structured_content


async def remember_then_recall(session: ClientSession, project: str) -> str:
    """The tools are listed, a memory stored, and the recall finds it first; its key."""
    tools = {tool.name for tool in (await session.list_tools()).tools}
    assert {"remember", "recall"} <= tools
    stored = structured(await session.call_tool("remember", {"content": FACT, "project": project}))
    assert stored["status"] == "stored"
    found = structured(
        await session.call_tool("recall", {"query": QUESTION, "projects": [project]})
    )
    assert found["results"][0]["key"] == stored["key"]
    assert found["results"][0]["content"] == FACT
    return str(stored["key"])


async def test_the_python_sdk_oauth_client_connects_through_chromium(
    browser: Browser,
    kit: OAuthKit,
) -> None:
    storage = Memory()
    with serving(LocalSite()) as callback:
        async with chromium_context(browser) as context:

            async def redirect(url: str) -> None:  # the person's browser: log in and allow
                await connect(context, url, callback)

            async def take_code() -> AuthorizationCodeResult:  # the client's loopback listener
                hit = await callback.wait("/callback")
                return AuthorizationCodeResult(code=hit.query["code"], state=hit.query["state"])

            provider = OAuthClientProvider(
                kit.url,
                OAuthClientMetadata(
                    client_name="MCP Python SDK",
                    redirect_uris=[AnyUrl(f"{callback.url}/callback")],
                    token_endpoint_auth_method="none",
                ),
                storage,
                redirect,
                take_code,
            )
            async with (
                httpx2.AsyncClient(auth=provider, timeout=60) as http,
                streamable_http_client(kit.url, http_client=http) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                await remember_then_recall(session, "python-sdk")
    # discovery, registration, PKCE and the token exchange were the SDK's own
    assert storage.client is not None
    assert storage.client.client_name == "MCP Python SDK"
    assert storage.tokens is not None
    assert set(str(storage.tokens.scope).split()) == {"read", "write", "offline_access"}
    assert [h.path for h in callback.hits if h.path != "/favicon.ico"] == ["/callback"]


async def test_mcp_remote_proxies_stdio_and_logs_in_through_its_browser_script(
    kit: OAuthKit,
    tmp_path: Path,
    shots: Path,  # noqa: F811
) -> None:
    """What a Claude Desktop user runs; its login and consent pages are docs/images' screenshots
    (KENNING_SCREENSHOTS=docs/images)."""
    proxy = installed("mcp-remote/dist/proxy.js")
    env = {
        **browser_env(tmp_path),
        "MCP_REMOTE_CONFIG_DIR": str(tmp_path / "mcp-auth"),
        "OAUTH_LOGIN_SHOTS": str(shots),
    }
    server = StdioServerParameters(
        command="node", args=[str(proxy), kit.url, str(free_port())], env=env, cwd=str(tmp_path)
    )
    log = tmp_path / "mcp-remote.log"
    started = time.time()
    with log.open("w") as errlog:
        try:
            with anyio.fail_after(120):
                async with (
                    stdio_client(server, errlog=errlog) as (read, write),
                    ClientSession(read, write) as session,
                ):
                    await session.initialize()
                    key = await remember_then_recall(session, "mcp-remote")
        except BaseException:
            print(log.read_text())
            raise
    assert audited_as_alice(kit, key)  # an OAuth grant of alice's, made in the browser
    tokens = list((tmp_path / "mcp-auth").rglob("*_tokens.json"))
    assert tokens, "mcp-remote kept no tokens"
    for page in ("login", "consent"):  # taken just now, by the browser script
        assert (shots / f"remote-access-{page}.png").stat().st_mtime > started


def test_claude_code_adds_kenning_with_a_bearer_token_and_lists_it_connected(
    kit: OAuthKit, tmp_path: Path
) -> None:
    claude = installed(".bin/claude")
    _, secret = kit.service.runtime.engine.tokens.create("claude-code", "write", actor="pytest")
    project = tmp_path / "project"
    project.mkdir()
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),  # its config (~/.claude.json) is the test's own
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    }

    def claude_mcp(*args: str) -> str:
        done = subprocess.run(
            [str(claude), "mcp", *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    for name, token in (("kenning", secret), ("kenning-wrong", "knt_not-a-token")):
        header = f"Authorization: Bearer {token}"
        claude_mcp("add", "--transport", "http", name, kit.url, "--header", header)
    listed = claude_mcp("list")
    print(listed)
    rows = {row.split(":")[0]: row for row in listed.splitlines() if row.startswith("kenning")}
    assert kit.url in rows["kenning"]
    assert "Connected" in rows["kenning"], listed
    assert "Connected" not in rows["kenning-wrong"], listed  # the control: the token decides


def test_the_typescript_sdk_oauth_client_connects_through_its_browser_script(
    kit: OAuthKit, tmp_path: Path
) -> None:
    installed("@modelcontextprotocol/sdk/package.json")
    program = CLIENTS / "ts_oauth_client.mjs"
    args = [kit.url, str(free_port()), "ts-sdk", FACT, QUESTION]
    done = subprocess.run(
        ["node", str(program), *args],
        cwd=CLIENTS,
        env=browser_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert {"remember", "recall"} <= set(answer["tools"])
    assert answer["stored"]["status"] == "stored"
    assert answer["found"]["results"][0]["key"] == answer["stored"]["key"]
    assert answer["found"]["results"][0]["content"] == FACT
    assert answer["client"] == "MCP TypeScript SDK"  # its own registration
    assert set(answer["scope"].split()) == {"read", "write", "offline_access"}
    assert audited_as_alice(kit, answer["stored"]["key"])


def test_claude_code_remembers_and_recalls_through_kenning_in_print_mode(
    kit: OAuthKit, tmp_path: Path
) -> None:
    """Claude Code's own agent loop, its model a scripted local stand-in (tests/mcp_server/
    model_fake.py): `claude -p` lists Kenning's tools, calls remember, then recall, and prints
    what recall returned."""
    claude = installed(".bin/claude")
    _, secret = kit.service.runtime.engine.tokens.create("claude-code", "write", actor="pytest")
    project = tmp_path / "project"
    project.mkdir()
    model = ScriptedModel(
        remember={"content": FACT, "project": "claude-code"},
        recall={"query": QUESTION, "projects": ["claude-code"]},
    )
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path / "home"),
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        "ANTHROPIC_API_KEY": "sk-ant-test-not-a-key",
        "ANTHROPIC_BASE_URL": model.url,
        "ENABLE_TOOL_SEARCH": "false",  # Kenning's tools in the request itself, not deferred
    }

    def claude_run(*args: str) -> str:
        done = subprocess.run(
            [str(claude), *args],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    header = f"Authorization: Bearer {secret}"
    claude_run("mcp", "add", "--transport", "http", "kenning", kit.url, "--header", header)
    with serving_model(model):
        said = claude_run(
            "-p",
            "Remember when the staging database is rebuilt, then recall it.",
            "--allowedTools",
            "mcp__kenning__remember,mcp__kenning__recall",
        )
    assert said.startswith("recall said: "), said
    found = json.loads(said.removeprefix("recall said: "))
    assert found["results"][0]["content"] == FACT
    offered = {tool["name"] for tool in model.requests[-1]["tools"]}
    assert {"mcp__kenning__remember", "mcp__kenning__recall"} <= offered  # its tools/list
    events = Store(
        kit.service.runtime.engine.ctx.store.client, kit.settings.key_prefix
    ).audit.recent(limit=50)
    # the token's name is the actor of the memory Claude Code stored
    assert any(e.actor == "claude-code" and e.key == found["results"][0]["key"] for e in events)
