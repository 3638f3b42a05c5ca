"""Every MCP tool's JSON result on a fixed scripted scenario, compared with a golden file.

The scenario drives the real server over Streamable HTTP with a real MCP client (an admin token, so
every tool is listed and callable) against a seeded store and the manual clock. Volatile parts are
normalised before the comparison (``normalise``): ULIDs (memory keys, ids) become ``<id-N>`` in
order of first appearance, content hashes ``<sha-N>``, similarity-like floats ``<float>``.
``tools/list`` (names, descriptions, schemas, annotations) is compared byte for byte.

A refactor of the doors or of the engine's result types must leave both files unchanged. After a
deliberate change of a tool's output, rewrite them with
``KENNING_WRITE_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from fastmcp import Client

from kenning.core.clock import ManualClock
from kenning.engine import Engine
from tests.kenning.skill_history import DOMAIN, seed
from tests.mcp_server.conftest import McpHarness, text_of

GOLDEN = Path(__file__).with_name("golden")
WRITE = os.environ.get("KENNING_WRITE_GOLDEN") == "1"
ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
# a content hash, or its shown prefix
SHA = re.compile(r"\b[0-9a-f]{64}\b|\b[0-9a-f]{12}(?=\u2026)")
STREAM_ID = re.compile(r"\b\d{13}-\d+\b")  # audit event ids: the Valkey server's own clock
# Fields that name the machine or the search module rather than the tool's behaviour.
VOLATILE = {
    "uptime_seconds",
    "uptime",
    "module",
    "search_module",
    "valkey_version",
    "module_version",
    "bytes",
    "size",
    "size_bytes",
    "file",
    "path",
    "used_memory",
    "model",
    "backend",
    "embedding_backend",
    "index",
    "spent",
    "seconds",
}  # index: a fresh random suffix per reindex; spent: a briefing's size moves with the digits of
# the similarities it quotes (tests/kenning/curation/test_briefing.py pins it exactly); seconds:
# how long a rebuild's self-check took
# Lists whose order among equals is not part of a tool's contract (a restore reports items in key
# order, and the skill history's memories are written within one millisecond, so their
# ULIDs may sort either way).
UNORDERED = {"items"}
FLY = "We deploy with Fly"
KAMAL = "We no longer use Fly; we deploy with Kamal"
NODE = "The CI pipeline builds the docs with Node 20 because scripts/gen.mjs uses fetch"
STAGING = "Deploys to staging go through the blue-green switch in infra/switch.sh"
DAY = 86_400.0


class Recorder:
    """Calls tools and keeps every result (or error text) in call order."""

    def __init__(self, client: Client[Any], clock: ManualClock) -> None:
        self.client = client
        self.clock = clock
        self.steps: list[dict[str, Any]] = []

    async def __call__(self, tool: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        self.clock.advance(1)  # every call at its own second: no ties in what is sorted by time
        result = await self.client.call_tool(tool, arguments or {}, raise_on_error=False)
        if result.is_error:
            self.steps.append(
                {"tool": tool, "arguments": arguments or {}, "error": text_of(result)}
            )
            return {}
        assert isinstance(result.structured_content, dict), tool
        self.steps.append(
            {"tool": tool, "arguments": arguments or {}, "result": result.structured_content}
        )
        return result.structured_content


class Names:
    """Volatile strings replaced by stable names in order of first appearance; the
    test's key prefix removed."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.seen: dict[str, str] = {}

    def name(self, kind: str, value: str) -> str:
        if value not in self.seen:
            self.seen[value] = (
                f"<{kind}-{sum(1 for v in self.seen.values() if v.startswith(f'<{kind}-')) + 1}>"
            )
        return self.seen[value]

    def text(self, value: str) -> str:
        value = value.replace(self.prefix, "<prefix>")
        value = ULID.sub(lambda m: self.name("id", m.group(0)), value)
        value = STREAM_ID.sub(lambda m: self.name("event", m.group(0)), value)
        return SHA.sub(lambda m: self.name("sha", m.group(0)), value)


def normalise(value: Any, names: Names, field: str = "") -> Any:
    if field in VOLATILE:
        return f"<{field}>"
    if isinstance(value, dict):
        return {names.text(k): normalise(v, names, k) for k, v in value.items()}
    if isinstance(value, list):
        out = [normalise(v, names, field) for v in value]
        return sorted(out, key=json.dumps) if field in UNORDERED else out
    if isinstance(value, str):
        return names.text(value)
    if isinstance(value, float) and (
        round(value, 2) != value or (_measured(field) and value not in (0.0, 1.0))
    ):
        # scores and similarities differ in their last digits across CPUs and modules
        return "<float>"
    return value


def _measured(field: str) -> bool:
    """A score or similarity: a model's number, normalised even when it happens to be round (0.54
    is 0.5400 after the engine's 4-digit rounding about once in a hundred runs); 0 and 1
    (identical texts) are exact."""
    return "similarity" in field or "score" in field


async def memories(call: Recorder, clock: ManualClock) -> dict[str, str]:
    node = await call(
        "remember", {"content": NODE, "project": "alpha", "tags": ["ci"], "title": "docs build"}
    )
    await call("remember", {"content": NODE, "project": "alpha"})  # a duplicate
    staging = await call("remember", {"content": STAGING, "project": "alpha", "source": "runbook"})
    await call("remember", {"content": "x"})  # refused: too short or otherwise invalid
    await call("recall", {"query": "which Node version builds the docs", "project": "alpha"})
    await call("recall_index", {"query": "how do deploys to staging work", "project": ["alpha"]})
    await call("recall_detail", {"keys": [node["key"], staging["key"]]})
    await call("recall_detail", {"keys": ["mem:knowledge:01ARZ3NDEKTSV4RRFFQ69G5FAV"]})
    await call("retag", {"key": node["key"], "add": ["docs"], "remove": ["ci"], "reason": "tidy"})
    clock.advance(60)
    await call(
        "update_memory",
        {"key": staging["key"], "content": STAGING + " (since March)", "reason": "date"},
    )
    await call("explain_memory", {"key": node["key"]})
    await call("memory_audit", {"projects": ["alpha"]})
    await call("history", {"key": staging["key"]})
    await call("audit_log", {"limit": 5})
    return {"node": node["key"], "staging": staging["key"]}


async def lifecycle(call: Recorder, keys: dict[str, str]) -> None:
    staging = keys["staging"]
    await call(
        "deprioritise",
        {"key": staging, "reason": "rarely needed", "reinstate_hints": ["blue-green"]},
    )
    await call("deprioritise", {"query": "scripts/gen.mjs uses fetch", "projects": ["alpha"]})
    await call("reinstate", {"key": staging, "reason": "needed again"})
    await call("archive", {"key": staging, "reason": "old"})
    await call("reinstate", {"query": "staging blue-green switch"})
    await call("reinstate", {"key": staging, "reason": "back"})
    await call("deprioritise", {})
    await call("forget", {"key": staging})
    await call("forget", {"key": staging, "confirm": True, "reason": "wrong"})
    await call("restore_forgotten", {"key": staging, "reason": "it was right"})
    await call("forget", {"query": "blue-green"})
    await call("suppress_topic", {"term": "blue-green", "reason": "noise", "preview": True})
    await call("suppress_topic", {"term": "blue-green", "reason": "noise"})
    await call("list_suppressions")
    await call("recall", {"query": "how do deploys to staging work", "project": "alpha"})
    await call("unsuppress_topic", {"term": "blue-green", "reason": "fine"})
    await call("why_did_you_mention", {"topic": keys["node"]})
    await call("deprioritise_project", {"project": "alpha", "reason": "paused"})
    await call("deprioritise_project", {"project": "alpha", "reason": "paused", "confirm": True})
    await call("reinstate_project", {"project": "alpha", "reason": "resumed", "confirm": True})
    await call("delete_project", {"project": "alpha", "reason": "preview only"})


async def experience(call: Recorder, keys: dict[str, str]) -> None:
    await call(
        "log_abandoned",
        {"name": "celery", "reason": "too heavy for three jobs", "effort": 4, "project": "alpha"},
    )
    await call("warn_if_abandoned", {"query": "shall we use celery for the nightly jobs?"})
    await call(
        "record_experience",
        {
            "key": keys["node"],
            "effort": 3,
            "outcome": "succeeded",
            "iterations": 2,
            "breakthrough": "pin Node",
            "gotchas": ["fetch needs Node 18+"],
            "abandoned_approaches": [{"name": "webpack", "reason": "slow"}],
        },
    )
    await call("get_experience", {"key": keys["node"]})
    await call("experience_summary", {"project": "alpha"})
    await call(
        "remember_document",
        {
            "text": "First part about caching.\n\nSecond part about queues.",
            "title": "notes",
            "project": "alpha",
            "size": 200,
        },
    )


async def truth(call: Recorder, clock: ManualClock, keys: dict[str, str]) -> None:
    fly = await call("remember", {"content": FLY, "project": "shop"})
    clock.advance(DAY)
    await call("remember", {"content": KAMAL, "project": "shop"})
    listed = await call("list_contradictions", {"project": "shop"})
    await call("check_contradictions", {"project": "shop"})
    await call("briefing", {"project": "shop"})
    await call(
        "resolve_contradiction", {"id": listed["contradictions"][0]["id"], "decision": "keep_b"}
    )
    await call("list_contradictions", {"status": "resolved"})
    await call("verify_memory", {"key": keys["node"], "note": "checked the workflow"})
    await call("verify_memory", {"key": fly["key"]})
    twin = await call("remember", {"content": NODE, "project": "alpha", "allow_duplicate": True})
    await call("find_duplicates", {"project": "alpha"})
    await call(
        "merge_duplicates", {"keep": keys["node"], "others": [twin["key"]], "reason": "same"}
    )
    await call("briefing", {"project": "alpha", "include_feeds": False})


async def projects(call: Recorder) -> None:
    await call(
        "set_project_context",
        {
            "name": "alpha",
            "description": "The docs site",
            "stack": ["node"],
            "conventions": "small commits",
        },
    )
    await call("set_project_context", {"name": "Alpha Beta"})
    await call("get_project_context", {"name": "alpha"})
    await call("update_project_state", {"name": "alpha", "state": "moving the build to Node 20"})
    await call("update_project_state", {"name": "nowhere", "state": "x"})
    await call("list_projects")


async def skills(call: Recorder, engine: Engine) -> None:
    history = seed(engine)
    proposal = await call("compile_skill", {"domain": DOMAIN})
    await call("compile_skill", {"domain": DOMAIN, "mode": "preview"})
    await call("approve_skill", {"proposal_id": proposal["id"], "sha": "a" * 64})
    await call("approve_skill", {"proposal_id": proposal["id"], "sha": proposal["sha"]})
    await call("write_skill", {"proposal_id": proposal["id"]})
    await call("get_skill", {"domain": DOMAIN})
    await call("find_skills", {"query": "add an index to a busy postgres table"})
    await call("bless", {"key": history.vacuum, "reason": "I did this"})
    await call("promote_knowledge", {"key": history.redis, "domain": DOMAIN})


async def admin(call: Recorder) -> None:
    await call("version")
    await call("queue_status")
    await call("list_backups")
    made = await call("backup", {"label": "golden"})
    await call("restore", {"file": str(made.get("file", "missing.json")).rsplit("/", 1)[-1]})
    await call("restore", {"file": "../etc/passwd"})
    await call("reindex", {})
    await call("health")


async def run(call: Recorder, mcp: McpHarness, clock: ManualClock) -> None:
    await projects(call)
    keys = await memories(call, clock)
    await lifecycle(call, keys)
    await experience(call, keys)
    await truth(call, clock, keys)
    await skills(call, mcp.engine)
    await admin(call)


def compare(name: str, got: Any) -> None:
    path = GOLDEN / name
    text = json.dumps(got, indent=1, sort_keys=False, ensure_ascii=False) + "\n"
    if WRITE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing; write it with KENNING_WRITE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), f"{name} changed; diff against the golden file"


async def test_every_tool_result_matches_the_golden_file(
    own_mcp: McpHarness, clock: ManualClock
) -> None:
    mcp = own_mcp
    async with mcp.client("admin") as client:
        call = Recorder(client, clock)
        await run(call, mcp, clock)
    called = {step["tool"] for step in call.steps}
    listed = {t.name for t in await _list(mcp)}
    assert called == listed, f"tools the scenario never calls: {sorted(listed - called)}"
    # positive control: mostly successes, not errors
    assert sum("result" in s for s in call.steps) > 60
    compare("tool_results.json", normalise(call.steps, Names(mcp.settings.key_prefix)))


async def test_tools_list_matches_the_golden_file(mcp: McpHarness) -> None:
    tools = await _list(mcp)
    assert len(tools) > 50
    listed = [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]
    compare("tools_list.json", listed)


async def _list(mcp: McpHarness) -> list[Any]:
    async with mcp.client("admin") as client:
        return list(await client.list_tools())
