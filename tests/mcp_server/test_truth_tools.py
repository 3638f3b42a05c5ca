"""Truth maintenance through a real MCP client over Streamable HTTP (issue 5, "Must show").

Every exclusion has a positive control: the hidden thing is shown to exist first.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import valkey
from fastmcp import Client

from kenning.core.clock import ManualClock
from kenning.core.models import iso
from kenning.engine import Engine
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import Embedder
from kenning.store import connect
from kenning.store import indexes as index_admin
from tests.conftest import free_port, make_settings
from tests.mcp_server.conftest import McpHarness, mcp_settings, ok, refused, start_harness

DAY = 86_400.0
FLY = "We deploy with Fly"
KAMAL = "We no longer use Fly; we deploy with Kamal"
DEPLOYS = "how do we deploy?"


async def remember(
    client: Client[Any], content: str, project: str = "shop", **extra: Any
) -> dict[str, Any]:
    stored = await ok(client, "remember", {"content": content, "project": project, **extra})
    assert stored["status"] == "stored"
    return stored


async def recall_keys(client: Client[Any], query: str, **extra: Any) -> list[str]:
    found = await ok(client, "recall", {"query": query, "projects": ["shop"], **extra})
    return [r["key"] for r in found["results"]]


async def test_fly_then_kamal_flagged_resolved_and_answered_for_both_times(
    mcp: McpHarness, clock: ManualClock
) -> None:
    async with mcp.client("write") as client:
        fly = (await remember(client, FLY))["key"]
        before = iso(clock.now() + 60)
        clock.advance(DAY)
        second = await remember(client, KAMAL)
        kamal = second["key"]
        assert any(fly in note and "contradiction" in note for note in second["notes"])
        listed = await ok(client, "list_contradictions", {"project": "shop"})
        (record,) = listed["contradictions"]
        assert listed["open_total"] == 1
        assert (record["a"]["key"], record["b"]["key"], record["status"]) == (fly, kamal, "open")
        assert (record["a"]["trust"], record["b"]["trust"]) == ("disputed", "disputed")
        assert record["second_tier"] == "unknown"
        # positive control: Fly is found before resolving
        assert fly in await recall_keys(client, DEPLOYS)

        done = await ok(
            client,
            "resolve_contradiction",
            {"id": record["id"], "decision": "keep_b", "note": "moved to Kamal"},
        )
        assert (done["status"], done["decision"], done["resolved_by"]) == (
            "resolved",
            "keep_b",
            "test-write",
        )
        now_keys = await recall_keys(client, DEPLOYS)
        assert kamal in now_keys
        assert fly not in now_keys
        assert await recall_keys(client, DEPLOYS, as_of=before) == [fly]
        shown = await ok(
            client, "recall", {"query": DEPLOYS, "projects": ["shop"], "include_superseded": True}
        )
        (old,) = [r for r in shown["results"] if r["key"] == fly]
        assert (old["trust"], old["superseded_by"]) == ("superseded", kamal)
        explained = (await ok(client, "explain_memory", {"key": fly}))["memory"]
        assert (explained["trust"], explained["superseded_by"]) == ("superseded", kamal)
        assert explained["valid_to"] is not None
        trail = await ok(client, "history", {"key": fly})
        decided = [e for e in trail["events"] if e["action"] == "resolve_contradiction"]
        assert [(e["actor"], e["reason"], e["details"]["decision"]) for e in decided] == [
            ("test-write", "moved to Kamal", "keep_b")
        ]
        assert (await ok(client, "list_contradictions", {}))["contradictions"] == []


async def test_agreeing_negatives_are_not_flagged_and_a_dismissed_pair_never_again(
    mcp: McpHarness,
) -> None:
    async with mcp.client("write") as client:
        await remember(client, "Do not use pickle for caching")
        flagged = await remember(client, "Use pickle for caching")
        assert flagged["notes"]  # positive control: opposite polarity on the same object
        quiet = await remember(client, "Do not use pickle for session data")
        assert "notes" not in quiet
        (record,) = (await ok(client, "list_contradictions", {}))["contradictions"]
        await ok(
            client,
            "resolve_contradiction",
            {"id": record["id"], "decision": "not_a_contradiction", "note": "different concerns"},
        )
        for target in (
            {"key": record["a"]["key"]},
            {"project": "shop"},
            {"query": "should we use pickle?"},
        ):
            report = await ok(client, "check_contradictions", target)
            assert report["examined"] >= 1
            assert report["opened"] == []
        assert (await ok(client, "list_contradictions", {}))["open_total"] == 0
        (kept,) = (await ok(client, "list_contradictions", {"status": "all"}))["contradictions"]
        assert (kept["id"], kept["decision"]) == (record["id"], "not_a_contradiction")
        assert "note" in await refused(
            client, "resolve_contradiction", {"id": record["id"], "decision": "both_valid"}
        )


async def test_forget_then_restore_forgotten_returns_the_memory_with_its_fields(
    mcp: McpHarness,
) -> None:
    async with mcp.client("write") as client:
        key = (
            await remember(
                client,
                "Staging needs the VPN profile ops-staging",
                tags=["vpn"],
                namespace="episodic",
                event_date="2026-09-01",
            )
        )["key"]
        (before,) = (await ok(client, "recall_detail", {"keys": [key]}))["memories"]
        await ok(client, "forget", {"key": key, "confirm": True, "reason": "tidying"})
        assert "not_found" in await refused(client, "recall_detail", {"keys": [key]})
        restored = await ok(client, "restore_forgotten", {"key": key, "reason": "still true"})
        assert restored["status"] == "restored"
        (after,) = (await ok(client, "recall_detail", {"keys": [key]}))["memories"]
        for name in (
            "content",
            "namespace",
            "project",
            "tags",
            "event_date",
            "created_at",
            "valid_from",
            "trust",
            "state",
            "kind",
            "actor",
        ):
            assert after[name] == before[name], name
        assert key in await recall_keys(client, "which VPN profile does staging need?")
        actions = [e["action"] for e in (await ok(client, "history", {"key": key}))["events"]]
        assert actions[-2:] == ["forget", "restore_forgotten"]
        log = await ok(client, "audit_log", {"actor": "test-write", "action": "restore_forgotten"})
        assert [e["key"] for e in log["events"]] == [key]


async def test_verify_duplicates_and_briefing(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        verified = (await remember(client, "The staging database is Postgres 16"))["key"]
        assert (await ok(client, "verify_memory", {"key": verified, "note": "checked"}))[
            "trust"
        ] == "verified"
        texts = [
            "Run the linter with `make lint` before pushing",
            "Always run the linter with `make lint` before pushing",
        ]
        keys = [(await remember(client, t, allow_duplicate=True))["key"] for t in texts]
        found = await ok(client, "find_duplicates", {"namespace": "knowledge", "project": "shop"})
        assert found["examined"] == 3
        (cluster,) = found["clusters"]
        assert sorted(m["key"] for m in cluster["members"]) == sorted(keys)
        keep, other = cluster["keep"], next(k for k in keys if k != cluster["keep"])
        brief = await ok(client, "briefing", {"project": "shop"})
        assert other in [m["key"] for m in brief["recent_knowledge"]]  # positive control
        merged = await ok(
            client, "merge_duplicates", {"keep": keep, "others": [other], "reason": "same rule"}
        )
        assert merged["archived"] == [other]
        (gone,) = (await ok(client, "recall_detail", {"keys": [other]}))["memories"]
        assert (gone["state"], gone["state_reason"]) == (
            "archived",
            f"duplicate of {keep}: same rule",
        )
        brief = await ok(client, "briefing", {"project": "shop"})
        recent = [m["key"] for m in brief["recent_knowledge"]]
        assert other not in recent
        assert {keep, verified} <= set(recent)


def _wipe(client: valkey.Valkey, prefix: str, dim: int) -> None:
    """Test-only: delete every key and index of the prefix except the MCP tokens, then recreate
    empty indexes (as a restart would)."""
    index_admin.drop(client, prefix)
    keys = [
        k
        for k in client.scan_iter(match=f"{prefix}*", count=1000)
        if not k.decode().startswith((f"{prefix}token:", f"{prefix}tokens"))
    ]
    client.delete(*keys)
    index_admin.ensure(client, prefix, dim)
    assert not list(client.scan_iter(match=f"{prefix}mem:*", count=1000))


async def test_backup_wipe_restore_round_trips_memories_suppressions_and_contradictions(
    own_mcp: McpHarness, client: valkey.Valkey
) -> None:
    async with own_mcp.client("admin") as admin:
        fly = (await remember(admin, FLY))["key"]
        kamal = (await remember(admin, KAMAL))["key"]
        other = (
            await remember(
                admin, "Prefer small pull requests", project="tools", namespace="preference"
            )
        )["key"]
        (record,) = (await ok(admin, "list_contradictions", {}))["contradictions"]
        await ok(admin, "resolve_contradiction", {"id": record["id"], "decision": "keep_b"})
        await ok(admin, "suppress_topic", {"term": "heroku", "reason": "we left Heroku"})
        keys = [fly, kamal, other]
        before = (await ok(admin, "recall_detail", {"keys": keys}))["memories"]
        records = (await ok(admin, "list_contradictions", {"status": "all"}))["contradictions"]
        made = await ok(admin, "backup", {"label": "mcp"})
        assert (made["memories"], made["suppressions"], made["contradictions"]) == (3, 1, 1)
        assert [b["file"] for b in (await ok(admin, "list_backups"))["backups"]] == [made["file"]]

        _wipe(client, own_mcp.settings.key_prefix, own_mcp.engine.ctx.embedder.dimension)
        assert "not_found" in await refused(admin, "recall_detail", {"keys": [fly]})
        plan = await ok(admin, "restore", {"file": made["file"]})
        assert (plan["dry_run"], plan["memories"]) == (True, {"add": 3, "update": 0, "skip": 0})
        # nothing written yet
        assert "not_found" in await refused(admin, "recall_detail", {"keys": [fly]})
        applied = await ok(admin, "restore", {"file": made["file"], "dry_run": False})
        assert (
            applied["suppressions"]
            == applied["contradictions"]
            == {"add": 1, "update": 0, "skip": 0}
        )

        assert (await ok(admin, "recall_detail", {"keys": keys}))["memories"] == before
        assert (await ok(admin, "list_contradictions", {"status": "all"}))[
            "contradictions"
        ] == records
        terms = [s["term"] for s in (await ok(admin, "list_suppressions"))["suppressions"]]
        assert terms == ["heroku"]
        assert await recall_keys(admin, DEPLOYS) == [kamal]
        again = await ok(admin, "restore", {"file": made["file"]})
        assert again["memories"] == {"add": 0, "update": 0, "skip": 3}
        rebuilt = await ok(admin, "reindex", {})
        assert rebuilt["num_docs"] == 3  # the one index holds every namespace's memories
        assert "invalid_input" in await refused(admin, "restore", {"file": "../../etc/passwd"})
    async with own_mcp.client("write") as writer:  # backups need the admin scope
        assert "permission" in (await refused(writer, "backup", {})).lower()


async def test_bad_input_is_refused_with_a_hint(mcp: McpHarness) -> None:
    async with mcp.client("admin") as client:
        a = (await remember(client, "Do not use pickle"))["key"]
        await remember(client, "Use pickle for caching")
        # positive control
        (record,) = (await ok(client, "list_contradictions", {}))["contradictions"]
        unknown = "mem:knowledge:01HNEVER0000000000000000000"
        cases: list[tuple[str, dict[str, Any], str]] = [
            (
                "resolve_contradiction",
                {"id": record["id"], "decision": "keep_both"},
                "'keep_a', 'keep_b'",
            ),
            ("resolve_contradiction", {"id": record["id"], "decision": "both_valid"}, "note="),
            (
                "resolve_contradiction",
                {"id": "../x", "decision": "keep_a"},
                "copy it from list_contradictions",
            ),
            (
                "resolve_contradiction",
                {"id": "01HNOSUCHRECORD", "decision": "keep_a"},
                "list_contradictions shows",
            ),
            (
                "check_contradictions",
                {"key": a, "project": "shop"},
                "check_contradictions(project=",
            ),
            ("list_contradictions", {"status": "pending"}, "'open', 'resolved', 'closed' or 'all'"),
            ("find_duplicates", {"threshold": 1.5}, "invalid_arguments: threshold: "),
            ("merge_duplicates", {"keep": a, "others": [a]}, "find_duplicates cluster"),
            ("history", {"key": "not a key"}, "copy one from recall"),
            ("audit_log", {"before": "yesterday"}, "pass the `next` value"),
            ("verify_memory", {"key": f"{mcp.settings.key_prefix}{unknown}"}, "history(key)"),
            ("verify_memory", {"key": a}, "resolve its contradiction with resolve_contradiction"),
            ("restore", {"file": "../../etc/passwd"}, "copy a name from list_backups"),
            ("backup", {"label": "../up"}, "a-z, 0-9"),
        ]
        for tool, arguments, hint in cases:
            message = await refused(client, tool, arguments)
            assert hint in message, (tool, message)
        assert (await ok(client, "list_contradictions", {}))["open_total"] == 1  # nothing changed


@pytest.fixture
def doomed_valkey(tmp_path: Path) -> Iterator[EmbeddedValkey]:
    """A Valkey of this test's own, so the test can stop it."""
    with EmbeddedValkey(make_settings(tmp_path / "doomed", free_port())) as server:
        yield server


async def test_valkey_down_is_an_outage_never_an_empty_answer(
    doomed_valkey: EmbeddedValkey, embedder: Embedder, tmp_path: Path
) -> None:
    settings = mcp_settings(doomed_valkey.settings, backup_dir=tmp_path / "backups")
    harness = start_harness(
        Engine.open(settings, connect(settings), embedder, clock=ManualClock(1_790_000_000.0)),
        settings,
    )
    try:
        async with harness.client("admin") as client:
            key = (await remember(client, "Do not use pickle"))["key"]
            await remember(client, "Use pickle for caching")
            # positive control
            assert (await ok(client, "list_contradictions", {}))["open_total"] == 1
            doomed_valkey.stop()
            for tool, arguments in (
                ("list_contradictions", {}),
                ("check_contradictions", {"project": "shop"}),
                ("find_duplicates", {}),
                ("history", {"key": key}),
                ("audit_log", {}),
                ("briefing", {"project": "shop"}),
                ("verify_memory", {"key": key}),
                ("backup", {}),
                ("recall", {"query": "pickle", "include_superseded": True}),
            ):
                message = await refused(client, tool, arguments)
                assert message.startswith("backend_unavailable"), (tool, message)
    finally:
        harness.service.stop()
