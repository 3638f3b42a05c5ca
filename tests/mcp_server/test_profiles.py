"""Tool profiles through real MCP clients: the default ``agent`` profile lists only its tools
(within the scope), ``curator`` the review tools, ``all`` everything; a tool outside the profile
is refused with a pointer to the profile that has it; the profile comes from the connection (a
header or ``?profile=``), the token (``--profile``) or an OAuth grant (``profile:NAME``), and it
never widens a scope. The whole agent workflow runs in the default profile."""

from __future__ import annotations

import typing
from collections.abc import Iterator
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.client.transports import StreamableHttpTransport
from mcp import MCPError

from kenning.access.tokens import PROFILES
from kenning.core.settings import Settings
from kenning.engine import Engine
from mcp_server import profiles
from tests.mcp_server.conftest import McpHarness, mcp_settings, ok, probe, refused, start_harness
from tests.mcp_server.oauth_kit import OAuthKit, start_oauth

_, REGISTRY = probe()
READ = {n for n, s in REGISTRY.specs.items() if s.scope == "read"}
WRITE = {n for n, s in REGISTRY.specs.items() if s.scope != "admin"}
REVIEW = {"resolve_contradiction", "find_duplicates", "merge_duplicates", "compile_skill"}


@pytest.fixture
def agent_mcp(engine: Engine, settings: Settings) -> Iterator[McpHarness]:
    """A server with the product's default profile (the harness's own shows every tool)."""
    harness = start_harness(engine, mcp_settings(settings, mcp_profile="agent"))
    yield harness
    harness.service.stop()


async def names(client: Client[Any]) -> set[str]:
    return {t.name for t in await client.list_tools()}


def test_the_profile_table_names_registered_tools_and_the_settings_own_names() -> None:
    assert tuple(profiles.MEMBERS) == PROFILES
    settings_names = typing.get_args(Settings.model_fields["mcp_profile"].annotation)
    assert settings_names == PROFILES
    assert Settings.model_fields["mcp_profile"].default == "agent"
    for members in profiles.MEMBERS.values():
        assert members is None or members <= set(REGISTRY.specs), members
    assert {profiles.home(n) for n in REGISTRY.specs} == set(PROFILES)  # each profile is some home
    assert profiles.home("recall") == "agent"
    assert profiles.home("find_duplicates") == "curator"
    assert profiles.home("backup") == "all"


async def test_the_default_profile_lists_the_agent_tools_its_scope_may_call(
    agent_mcp: McpHarness,
) -> None:
    listed: dict[tuple[str, str | None], set[str]] = {}
    for scope in ("read", "write", "admin"):
        for profile in (None, "curator", "all"):
            async with agent_mcp.client(scope, profile=profile) as client:
                listed[scope, profile] = await names(client)
    # positive control: the hidden tools exist and are shown under `all`
    assert listed["admin", "all"] == set(REGISTRY.specs)
    assert listed["write", "all"] == WRITE
    assert listed["write", "all"] >= REVIEW
    assert listed["write", None] == profiles.AGENT
    assert not REVIEW & listed["write", None]
    assert listed["admin", None] == profiles.AGENT  # admin is a scope, not a profile
    assert listed["read", None] == profiles.AGENT & READ
    assert "remember" not in listed["read", None]
    assert "recall" in listed["read", None]
    assert listed["write", "curator"] == profiles.CURATOR & WRITE
    assert listed["write", "curator"] >= REVIEW
    assert not {"remember", "backup", "reindex"} & listed["admin", "curator"]
    assert "approve_skill" in listed["admin", "curator"]
    assert "approve_skill" not in listed["write", "curator"]  # the scope still decides


async def test_a_tool_outside_the_profile_is_refused_with_a_pointer_to_its_profile(
    agent_mcp: McpHarness,
) -> None:
    async with agent_mcp.client("admin", profile="curator") as curator:
        # positive control: the same call in a profile that has it
        assert "clusters" in await ok(curator, "find_duplicates", {"project": "nowhere"})
    async with agent_mcp.client("admin") as agent:
        message = await refused(agent, "find_duplicates", {"project": "nowhere"})
        assert message.startswith("invalid_input: tool 'find_duplicates' is not in"), message
        assert "'agent' profile; profile 'curator' has it" in message
        assert "X-Kenning-Profile: curator" in message
        assert "--profile curator" in message
        assert "profile 'all' has it" in await refused(agent, "list_backups")
    async with agent_mcp.client("write") as writer:
        # the scope is checked first: a write token hears it may not, not where the tool is
        assert (await refused(writer, "backup")).startswith("permission_denied:")


async def test_a_profile_never_widens_the_scope(agent_mcp: McpHarness) -> None:
    async with agent_mcp.client("read", profile="all") as reader:
        listed = await names(reader)
        assert listed == READ  # every read tool, no mutating one
        assert (await refused(reader, "remember", {"content": "Not allowed"})).startswith(
            "permission_denied:"
        )


async def test_a_profile_by_query_option_and_an_unknown_profile_names_the_valid_ones(
    agent_mcp: McpHarness,
) -> None:
    secret = agent_mcp.secrets["write"]
    by_query = Client(StreamableHttpTransport(f"{agent_mcp.url}?profile=curator", auth=secret))
    async with by_query as client:
        assert await names(client) == profiles.CURATOR & WRITE
    async with agent_mcp.client("write", profile="bogus") as client:
        with pytest.raises(MCPError, match=r"unknown profile 'bogus'.*agent, curator, all"):
            await client.list_tools()
        message = await refused(client, "recall", {"query": "anything"})
        assert "unknown profile 'bogus'" in message
        assert "use one of agent, curator, all" in message


async def test_a_tokens_own_profile_is_its_default_and_the_header_overrides_it(
    agent_mcp: McpHarness,
) -> None:
    token, secret = agent_mcp.engine.tokens.create(
        "reviewer", "write", actor="pytest", profile="curator"
    )
    assert token.profile == "curator"
    assert agent_mcp.engine.tokens.verify(secret) == token
    plain = [t for t in agent_mcp.engine.tokens.all() if t.name == "test-write"]
    assert plain[0].profile is None  # no profile chosen: the server's default
    async with Client(StreamableHttpTransport(agent_mcp.url, auth=secret)) as client:
        assert await names(client) == profiles.CURATOR & WRITE
    headers = {"X-Kenning-Profile": "agent"}
    async with Client(StreamableHttpTransport(agent_mcp.url, headers=headers, auth=secret)) as c:
        assert await names(c) == profiles.AGENT


@pytest.fixture
def kit(engine: Engine, settings: Settings) -> Iterator[OAuthKit]:
    started = start_oauth(engine, settings)  # the server's default: every tool
    yield started
    started.service.stop()


async def test_an_oauth_grant_carries_the_profile_chosen_at_consent(kit: OAuthKit) -> None:
    client = await kit.register(
        client_name="agent", redirect_uris=["http://127.0.0.1:5000/cb"], scope="read write"
    )
    plain = await kit.tokens(client, scope="read write")
    lean = await kit.tokens(client, scope="read write profile:agent")
    assert lean["scope"] == "read write profile:agent"
    async with Client(StreamableHttpTransport(kit.url, auth=plain["access_token"])) as mcp:
        assert await names(mcp) == WRITE  # positive control: the server's default shows all
    async with Client(StreamableHttpTransport(kit.url, auth=lean["access_token"])) as mcp:
        assert await names(mcp) == profiles.AGENT
        stored = await ok(mcp, "remember", {"content": "Granted with the agent profile"})
        assert stored["status"] == "stored"
        assert "profile 'curator' has it" in await refused(mcp, "audit_log")
    # the person may untick it: the grant then has none, and the server's default applies
    unticked = await kit.tokens(
        client, scope="read write profile:curator", scopes=["read", "write"]
    )
    assert unticked["scope"] == "read write"
    async with Client(StreamableHttpTransport(kit.url, auth=unticked["access_token"])) as mcp:
        assert await names(mcp) == WRITE
    async with kit.http() as http:
        page = await kit.consent_page(
            http, kit.authorize_url(client, "y" * 43, scope="read profile:curator")
        )
    assert 'value="profile:curator"' in page.text
    assert "be shown the review tools" in page.text
    # a profile alone grants nothing
    verifier_scope_only = await kit.browse(
        kit.authorize_url(client, "x" * 43, scope="read profile:agent"), scopes=["profile:agent"]
    )
    assert verifier_scope_only.status_code == 400
    assert "grant at least one of the scopes" in verifier_scope_only.text


async def test_the_agent_workflow_runs_in_the_default_profile(agent_mcp: McpHarness) -> None:
    async with agent_mcp.client("write") as agent:
        assert await names(agent) == profiles.AGENT
        stored = await ok(
            agent,
            "remember",
            {
                "content": "The nightly export runs from cron on the db host at 02:00",
                "project": "ops-flow",
                "tags": ["cron"],
            },
        )
        key = stored["key"]
        found = await ok(agent, "recall", {"query": "when does the nightly export run"})
        assert key in [r["key"] for r in found["results"]]
        assert "recall_index" in await refused(agent, "recall_index", {"query": "export"})
        detail = await ok(agent, "recall_detail", {"keys": [key]})
        assert detail["memories"][0]["content"].startswith("The nightly export")
        await ok(agent, "record_experience", {"key": key, "effort": 2, "outcome": "succeeded"})
        await ok(
            agent,
            "log_abandoned",
            {
                "name": "systemd timers",
                "reason": "no journal on the host",
                "effort": 2,
                "project": "ops-flow",
            },
        )
        warned = await ok(agent, "warn_if_abandoned", {"query": "use systemd timers instead"})
        assert [w["name"] for w in warned["warnings"]] == ["systemd timers"]
        brief = await ok(agent, "briefing", {"project": "ops-flow"})
        assert key in [m["key"] for m in brief["recent_knowledge"]]
        assert "systemd timers" in [a["name"] for a in brief["graveyard"]]
        assert (await ok(agent, "find_skills", {"query": "schedule the nightly export"}))[
            "skills"
        ] == []  # none written: the tool answers, it does not pretend
