"""Every core tool through a real MCP client over Streamable HTTP:
listing, happy paths, bad input."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import pkgutil
from types import ModuleType
from typing import Any

import numpy as np
import valkey
from fastmcp import Client
from mcp_types import ToolAnnotations

from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.runtime.embedding import Embedder
from kenning.store import connect, vectors
from mcp_server import tools as tools_package
from mcp_server.app import build_server
from mcp_server.registry import is_tool
from mcp_server.runtime import ENGINE_THREADS
from tests.mcp_server.conftest import McpHarness, mcp_settings, ok, probe, refused, start_harness

CI_FACT = "The CI pipeline builds the docs with Node 20 because scripts/gen.mjs uses fetch"


async def test_listing_matches_the_registry_with_schemas_and_truthful_annotations(
    mcp: McpHarness,
) -> None:
    _, registry = probe()
    async with mcp.client("admin") as client:
        tools = {t.name: t for t in await client.list_tools()}
    assert set(tools) == set(registry.specs)
    assert {"remember", "recall", "forget", "health", "version", "remember_document"} <= set(tools)
    for name, tool in tools.items():
        spec = registry.specs[name]
        assert tool.description, name
        assert len(tool.description) < 400, name
        assert tool.input_schema["type"] == "object", name
        assert hints(tool.annotations) == (spec.read_only, spec.destructive), name
        assert tool.meta is None, name  # the scope is the registry's; nothing else to say
    assert hints(tools["forget"].annotations) == (False, True)
    assert tools["remember"].input_schema["required"] == ["content"]


async def test_the_schema_each_call_is_checked_against_is_the_listed_one(mcp: McpHarness) -> None:
    # The transport checks every tools/call's Mcp-Param-* headers against Registry.input_schema
    # (instead of listing every tool per call): it must be exactly what tools/list advertises, and
    # nothing for an unknown name.
    _, registry = probe()
    async with mcp.client("admin") as client:
        listed = {t.name: t.input_schema for t in await client.list_tools()}
    assert set(listed) == set(registry.specs)  # every tool, not an empty comparison
    assert {name: registry.input_schema(name) for name in listed} == listed
    assert registry.input_schema("no_such_tool") is None


def test_the_server_answers_the_transports_schema_lookup_from_its_registry(
    engine: Engine, settings: Settings
) -> None:
    server, registry, _ = build_server(engine, settings)
    hook = server._mcp_server.get_tool_input_schema
    assert hook is not None
    assert hook("recall") == registry.input_schema("recall")
    assert "query" in (hook("recall") or {}).get("properties", {})


def hints(annotations: ToolAnnotations | None) -> tuple[bool, bool]:
    """(read-only, destructive) as an MCP client reads the annotations: a hint left out has the
    spec's default (readOnlyHint false, destructiveHint true, meaningful only when not
    read-only)."""
    assert annotations is not None
    read_only = annotations.read_only_hint is True
    return read_only, not read_only and annotations.destructive_hint is not False


# (readOnlyHint, destructiveHint) written out by hand: what each core tool really does,
# not what the registry says.
CORE_HINTS = {
    "remember": (False, False),
    "remember_document": (False, False),
    "recall": (True, False),
    "recall_index": (True, False),
    "recall_detail": (True, False),
    "explain_memory": (True, False),
    "memory_audit": (True, False),
    "retag": (False, True),
    "update_memory": (False, True),
    "forget": (False, True),
    "set_project_context": (False, True),
    "get_project_context": (True, False),
    "list_projects": (True, False),
    "update_project_state": (False, True),
    "health": (True, False),
    "version": (True, False),
}


async def test_core_tool_hints_are_truthful_and_read_only_tools_change_nothing(
    mcp: McpHarness,
) -> None:
    async with mcp.client("write") as writer:
        tools = {t.name: t for t in await writer.list_tools()}
        key = (
            await ok(
                writer,
                "remember",
                {
                    "content": "Read-only tools leave this memory alone",
                    "project": "hints",
                    "tags": ["probe"],
                },
            )
        )["key"]
        await ok(
            writer, "set_project_context", {"name": "hints", "description": "Annotation probe"}
        )
    assert {name: hints(tools[name].annotations) for name in CORE_HINTS} == CORE_HINTS
    before = mcp.engine.memories.get(key)
    events = len(mcp.engine.store.audit.recent(limit=500))
    reads: dict[str, dict[str, Any]] = {
        "recall": {"query": "read-only tools"},
        "recall_index": {"query": "read-only tools"},
        "recall_detail": {"keys": [key]},
        "explain_memory": {"key": key},
        "memory_audit": {},
        "get_project_context": {"name": "hints"},
        "list_projects": {},
        "health": {},
        "version": {},
    }
    assert set(reads) == {name for name, (read_only, _) in CORE_HINTS.items() if read_only}
    async with mcp.client("read") as reader:
        for name, arguments in reads.items():
            await ok(reader, name, arguments)
    after = mcp.engine.memories.get(key)
    assert (after.content, after.tags, after.state, after.trust, after.updated_at) == (
        before.content,
        before.tags,
        before.state,
        before.trust,
        before.updated_at,
    )
    # no read appended an audit event
    assert len(mcp.engine.store.audit.recent(limit=500)) == events
    assert events >= 2  # positive control: the writes above were audited


async def test_remember_recall_forget_with_the_token_name_as_actor(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        stored = await ok(
            client, "remember", {"content": CI_FACT, "project": "kenning-api", "tags": ["ci"]}
        )
        assert stored["status"] == "stored"
        again = await ok(client, "remember", {"content": CI_FACT, "project": "kenning-api"})
        assert again == {
            "status": "duplicate",
            "key": stored["key"],
            "similarity": again["similarity"],
            "notes": again["notes"],
        }
        found = await ok(
            client,
            "recall",
            {"query": "which Node version builds the docs?", "projects": ["kenning-api"]},
        )
        assert found["results"][0]["key"] == stored["key"]
        assert found["results"][0]["content"] == CI_FACT
        preview = await ok(client, "forget", {"key": stored["key"]})
        assert preview["status"] == "preview"
        assert (await ok(client, "recall_detail", {"keys": [stored["key"]]}))["memories"][0][
            "key"
        ] == stored["key"]
        gone = await ok(client, "forget", {"key": stored["key"], "confirm": True, "reason": "test"})
        assert gone == {"status": "forgotten", "key": stored["key"]}
        assert "not_found" in await refused(client, "recall_detail", {"keys": [stored["key"]]})
    history = mcp.engine.store.audit.history(stored["key"])
    assert [e.action for e in history] == ["remember", "forget"]
    assert {e.actor for e in history} == {"test-write"}


async def test_recall_index_gives_snippets_and_token_estimates_then_detail_gives_records(
    mcp: McpHarness,
) -> None:
    long_text = "Deployments go through the blue-green switch in deploy/switch.sh. " * 12
    async with mcp.client("write") as client:
        key = (await ok(client, "remember", {"content": long_text, "project": "ops"}))["key"]
        index = await ok(client, "recall_index", {"query": "how do deployments switch traffic"})
        hit = index["results"][0]
        assert hit["key"] == key
        assert "content" not in hit
        assert hit["snippet"].endswith("...")
        assert len(hit["snippet"]) == 160
        assert hit["tokens"] == (len(long_text.strip()) + 3) // 4
        assert index["tokens_total"] >= hit["tokens"]
        detail = await ok(client, "recall_detail", {"keys": [key]})
        record = detail["memories"][0]
        assert record["content"] == long_text.strip()
        assert record["actor"] == "test-write"
        assert record["project"] == "ops"


async def test_retag_and_update_memory_keep_history(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        key = (
            await ok(
                client, "remember", {"content": "Releases are cut on Tuesdays", "tags": ["release"]}
            )
        )["key"]
        tagged = await ok(client, "retag", {"key": key, "add": ["process"], "remove": ["release"]})
        assert tagged == {"key": key, "tags": ["process"]}
        before = mcp.engine.store.memories.read_vector(key)
        updated = await ok(
            client,
            "update_memory",
            {"key": key, "content": "Releases are cut on Wednesdays", "reason": "moved"},
        )
        assert updated["status"] == "updated"
        explained = await ok(client, "explain_memory", {"key": key})
    after = mcp.engine.store.memories.read_vector(key)
    assert before is not None
    assert after is not None
    model = mcp.engine.ctx.embedder.embed("Releases are cut on Wednesdays")
    assert np.allclose(after, vectors.spread(key, model), atol=1e-5)  # as the store writes it
    assert not np.allclose(before, after)  # re-embedded from the new text
    assert explained["memory"]["content"] == "Releases are cut on Wednesdays"
    assert explained["has_vector"] is True
    actions = [e["action"] for e in explained["history"]]
    assert actions == ["remember", "retag", "update"]
    assert explained["history"][2]["details"]["previous_content"] == "Releases are cut on Tuesdays"
    assert explained["history"][2]["reason"] == "moved"


async def test_remember_document_chunks_share_a_doc_id(mcp: McpHarness) -> None:
    paragraphs = [
        f"Section {i}: the {topic} service owns {topic} data and exposes it over gRPC." * 3
        for i, topic in enumerate(["billing", "search", "identity"])
    ]
    async with mcp.client("write") as client:
        result = await ok(
            client,
            "remember_document",
            {
                "text": "\n\n".join(paragraphs),
                "title": "Services",
                "project": "platform",
                "size": 300,
            },
        )
        assert result["chunks"] == 3
        assert result["stored"] == 3
        records = (await ok(client, "recall_detail", {"keys": result["keys"]}))["memories"]
    assert {r["doc_id"] for r in records} == {result["doc_id"]}
    assert [r["chunk_index"] for r in records] == [0, 1, 2]
    assert [r["kind"] for r in records] == ["chunk"] * 3
    assert records[1]["content"] == paragraphs[1]
    async with mcp.client("read") as client:
        found = await ok(
            client, "recall", {"query": "who owns identity data?", "project": "platform"}
        )
    top = found["results"][0]
    assert (top["doc_id"], top["chunk_index"], top["title"]) == (result["doc_id"], 2, "Services")


async def test_remember_document_fixed_windows_overlap_and_sentences_stay_whole(
    mcp: McpHarness,
) -> None:
    text = (
        "Invoices are generated nightly by the billing worker and mailed as PDF attachments to "
        "customers. Search queries hit the Valkey index first and fall back to Postgres full "
        "text when it is cold. Login sessions last twelve hours and refresh tokens rotate on "
        "every use by the identity service. Exports run on Sundays and write Parquet files into "
        "the analytics bucket for the finance team."
    )
    async with mcp.client("write") as client:
        fixed = await ok(
            client,
            "remember_document",
            {"text": text, "strategy": "fixed", "size": 200, "overlap": 50, "project": "windows"},
        )
        windows = (await ok(client, "recall_detail", {"keys": fixed["keys"]}))["memories"]
        sentences = await ok(
            client,
            "remember_document",
            {"text": text, "strategy": "sentences", "size": 200, "project": "sentences"},
        )
        whole = (await ok(client, "recall_detail", {"keys": sentences["keys"]}))["memories"]
    assert (fixed["chunks"], fixed["stored"]) == (3, 3)
    assert [w["content"] for w in windows] == [
        text[0:200].strip(),
        text[150:350].strip(),
        text[300:].strip(),
    ]
    assert {w["doc_id"] for w in windows} == {fixed["doc_id"]}
    assert [w["metadata"]["strategy"] for w in windows] == ["fixed"] * 3
    assert (sentences["chunks"], sentences["stored"]) == (2, 2)
    assert [w["content"][-1] for w in whole] == [".", "."]
    assert " ".join(w["content"] for w in whole) == text
    assert {w["doc_id"] for w in whole} == {sentences["doc_id"]} != {fixed["doc_id"]}


async def test_project_context_tools(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        created = await ok(
            client,
            "set_project_context",
            {
                "name": "kenning-api",
                "description": "Memory server for agents",
                "stack": ["python", "valkey"],
            },
        )
        assert created["status"] == "created"
        await ok(
            client, "remember", {"content": "The API uses ULIDs for keys", "project": "kenning-api"}
        )
        state = await ok(
            client, "update_project_state", {"name": "kenning-api", "state": "MCP server in review"}
        )
        assert state["status"] == "updated"
        again = await ok(
            client, "update_project_state", {"name": "kenning-api", "state": "MCP server in review"}
        )
        assert again["status"] == "unchanged"
        got = await ok(client, "get_project_context", {"name": "kenning-api"})
        listed = await ok(client, "list_projects")
        found = await ok(
            client,
            "recall",
            {"query": "what is the status of the MCP server review", "namespaces": ["project"]},
        )
    project = got["project"]
    assert project["description"] == "Memory server for agents"
    assert project["stack"] == ["python", "valkey"]
    assert project["state"] == "MCP server in review"
    assert got["memories"]["knowledge"] == 1
    assert got["memories"]["project"] == 1
    assert listed["total"] == 1
    assert listed["projects"][0]["name"] == "kenning-api"
    assert found["results"][0]["key"] == project["key"]  # found by its new state: re-embedded
    events = mcp.engine.store.audit.history(project["key"])
    assert [(e.actor, e.details["re_embedded"]) for e in events] == [
        ("test-write", True),
        ("test-write", True),
    ]


async def test_memory_audit_health_and_version(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        for text in ("Use ruff for linting", "Use mypy in strict mode"):
            await ok(client, "remember", {"content": text, "namespace": "preference"})
        audit = await ok(
            client, "memory_audit", {"namespaces": ["preference", "knowledge"], "limit": 1}
        )
        health = await ok(client, "health")
        version = await ok(client, "version")
    assert audit["counts"] == {
        "preference": {"active": 2, "deprioritised": 0, "archived": 0},
        "knowledge": {"active": 0, "deprioritised": 0, "archived": 0},
    }
    assert audit["total"] == 2
    assert audit["page"]["total"] == 2
    assert len(audit["page"]["items"]) == 1
    assert audit["page"]["items"][0]["snippet"] in {
        "Use mypy in strict mode",
        "Use ruff for linting",
    }
    assert health["status"] == "ok"
    assert set(health["checks"]) == {"valkey", "search_module", "indexes", "model"}
    assert health["uptime_seconds"] >= 0
    assert version["name"] == "kenning"
    assert version["version"] == health["version"]


BAD_INPUTS: list[tuple[str, dict[str, Any], tuple[str, ...]]] = [
    ("remember", {"content": "   "}, ("invalid_input", "content is empty", "hint")),
    (
        "remember",
        {"content": "x", "namespace": "diary"},
        ("invalid_arguments", "namespace", "'knowledge'"),
    ),
    (
        "remember",
        {"content": "x", "project": "Bad Project!"},
        ("invalid_input", "not allowed", "a-z"),
    ),
    (
        "remember",
        {"content": "x" * 50_001},
        ("invalid_input", "the limit is 50,000", "remember_document"),
    ),
    ("remember", {}, ("content",)),
    (
        "recall",
        {"query": "x", "top_k": 0},
        ("invalid_arguments", "top_k", "greater than or equal to 1"),
    ),
    (
        "recall",
        {"query": ""},
        (
            "invalid_input",
            "empty",
        ),
    ),
    ("recall_index", {"query": "x", "top_k": 51}, ("invalid_arguments", "top_k")),
    ("recall_detail", {"keys": []}, ("invalid_input", "1 to 20")),
    ("recall_detail", {"keys": ["not-a-key"]}, ("invalid_input", "is not a memory key")),
    ("retag", {"key": "KEY", "add": ["Bad Tag!"]}, ("invalid_input", "tag", "not allowed")),
    ("update_memory", {"key": "MISSING", "content": "y"}, ("not_found",)),
    ("forget", {"key": "not-a-key"}, ("invalid_input", "is not a memory key")),
    ("remember_document", {"text": " "}, ("invalid_input", "empty")),
    (
        "remember_document",
        {"text": "abc " * 200, "strategy": "fixed", "size": 400, "overlap": 300},
        ("invalid_input", "overlap"),
    ),
    ("remember_document", {"text": "abc", "strategy": "chapters"}, ("strategy",)),
    ("remember_document", {"text": "abc", "size": 100}, ("invalid_arguments", "size", "200")),
    ("remember_document", {"text": "abc " * 130_000}, ("invalid_input", "the limit is 500,000")),
    ("set_project_context", {"name": "Bad Name!"}, ("invalid_input", "not allowed")),
    ("get_project_context", {"name": "no-such-project"}, ("not_found", "set_project_context")),
    ("update_project_state", {"name": "no-such-project", "state": "x"}, ("not_found",)),
    ("list_projects", {"limit": 0}, ("invalid_arguments", "limit")),
    ("explain_memory", {"key": "MISSING"}, ("not_found",)),
    ("memory_audit", {"states": ["deleted"]}, ("invalid_arguments", "states", "'active'")),
    ("memory_audit", {"limit": 201}, ("invalid_arguments", "limit")),
    ("health", {"verbose": True}, ("verbose",)),
    ("version", {"format": "long"}, ("format",)),
]


async def test_bad_input_is_refused_with_what_was_wrong_and_what_is_allowed(
    mcp: McpHarness,
) -> None:
    async with mcp.client("write") as client:
        key = (await ok(client, "remember", {"content": "A memory to point bad calls at"}))["key"]
        missing = key[:-4] + "ZZZZ"
        for tool, template, expected in BAD_INPUTS:
            arguments = {
                k: key if v == "KEY" else missing if v == "MISSING" else v
                for k, v in template.items()
            }
            message = await refused(client, tool, arguments)
            for fragment in expected:
                assert fragment in message, (
                    f"{tool}({arguments}) said {message!r}; expected {fragment!r}"
                )
    # every core tool refuses bad input
    assert {tool for tool, _, _ in BAD_INPUTS} == set(CORE_HINTS)


async def test_a_burst_of_calls_and_new_sessions_queues_within_the_engine_threads(
    settings: Settings, client: valkey.Valkey, embedder: Embedder, clock: ManualClock
) -> None:
    """Every Valkey user in the server (tools, token look-ups, /healthz) shares one limiter of
    ENGINE_THREADS threads, and a recall's log entry and counter touch are written behind its
    reply by one thread of the store's (kenning.store.writer), so a pool of exactly that many
    connections plus one is never exhausted, however the calls interleave. (A pool of
    ENGINE_THREADS alone ran out once in a fresh-clone run: "Too many connections" while the
    writer wrote behind the 24 recalls.)"""
    tight = connect(settings, max_connections=ENGINE_THREADS + 1)
    engine = Engine.open(settings, tight, embedder, clock=clock)
    harness = start_harness(engine, mcp_settings(settings))
    fresh = [engine.tokens.create(f"burst-{i}", "read", actor="pytest")[1] for i in range(24)]

    async def new_session(secret: str) -> list[str]:  # a token this server has not verified yet
        async with Client(harness.url, auth=secret) as session:
            index = await ok(session, "recall_index", {"query": "how is concurrency bounded?"})
            return [hit["key"] for hit in index["results"]]

    try:
        async with harness.client("write") as writer:
            key = (
                await ok(
                    writer, "remember", {"content": "Concurrency is bounded by a capacity limiter"}
                )
            )["key"]
            recalls, audits, sessions = await asyncio.gather(
                asyncio.gather(
                    *(
                        ok(writer, "recall", {"query": "how is concurrency bounded?"})
                        for _ in range(24)
                    )
                ),
                asyncio.gather(*(ok(writer, "memory_audit", {"limit": 200}) for _ in range(64))),
                asyncio.gather(*(new_session(secret) for secret in fresh)),
            )
    finally:
        harness.service.stop()
        tight.close()  # type: ignore[no-untyped-call]
    assert [r["results"][0]["key"] for r in recalls] == [key] * 24
    assert [a["total"] for a in audits] == [1] * 64
    assert sessions == [[key]] * 24


async def test_the_mcp_client_fixture_is_connected_with_a_write_token(
    mcp_client: Client[Any], mcp: McpHarness
) -> None:
    stored = await ok(
        mcp_client, "remember", {"content": "The mcp_client fixture writes as test-write"}
    )
    assert mcp.engine.memories.get(stored["key"]).actor == "test-write"


async def test_remember_takes_valid_time_and_expiry(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        stored = await ok(
            client,
            "remember",
            {
                "content": "The staging cluster runs Postgres 16",
                "valid_from": "2026-12-01",
                "expires_at": "2027-01-01T00:00:00Z",
            },
        )
        # recorded at the test clock's now, 2026-09-21
        memory = mcp.engine.memories.get(stored["key"])
        assert (memory.valid_from, memory.expires_at) == (1796083200.0, 1798761600.0)
        before = await ok(
            client, "recall", {"query": "staging postgres version", "as_of": "2026-10-01"}
        )
        after = await ok(
            client, "recall", {"query": "staging postgres version", "as_of": "2026-12-15"}
        )
        assert [r["key"] for r in after["results"]] == [stored["key"]]  # positive control
        assert before["results"] == []  # not yet true then
        assert "not a date" in await refused(
            client, "remember", {"content": "x y z", "valid_from": "soonish"}
        )


def test_every_tool_is_a_module_level_function_found_by_its_name() -> None:
    # The convention (mcp_server/tools/__init__.py): a reader finds a tool with `grep "def <name>"`,
    # and the tools/list order is each module's definition order.
    _, registry = probe()
    found = {
        name: module
        for module in tool_modules()
        for name, value in vars(module).items()
        if inspect.isfunction(value) and value.__module__ == module.__name__ and is_tool(value)
    }
    assert len(found) > 50  # positive control: the modules' tools were seen
    assert set(found) == set(registry.specs)
    assert list(registry.specs) == [
        name
        for module in tool_modules()
        for name in vars(module)
        if name in found and found[name] is module
    ]


def tool_modules() -> list[ModuleType]:
    return [
        importlib.import_module(f"mcp_server.tools.{m.name}")
        for m in sorted(pkgutil.iter_modules(tools_package.__path__), key=lambda m: m.name)
    ]
