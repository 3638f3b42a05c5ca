"""Lifecycle, suppression and recall-log tools through a real MCP client (issue 4, "Must show")."""

from __future__ import annotations

from typing import Any

from fastmcp import Client

from tests.mcp_server.conftest import McpHarness, ok, refused, remember

SESSIONS = "Session state lives in Redis with a 30 minute TTL; the key is sess:<user id>."
QUESTION = "where is session state stored?"


async def result_keys(client: Client[Any], query: str, **extra: Any) -> list[str]:
    found = await ok(client, "recall", {"query": query, **extra})
    return [r["key"] for r in found["results"]]


async def test_deprioritised_only_through_its_hint_or_when_included_and_archived_never(
    mcp: McpHarness,
) -> None:
    async with mcp.client("write") as client:
        key = await remember(client, SESSIONS)
        assert (await result_keys(client, QUESTION))[0] == key  # positive control
        done = await ok(
            client,
            "deprioritise",
            {
                "key": key,
                "reason": "sessions moved to Postgres",
                "reinstate_hints": ["redis cluster"],
            },
        )
        assert (done["status"], done["from"], done["to"]) == ("done", "active", "deprioritised")
        assert key not in await result_keys(client, QUESTION)
        # substring, not the hint
        assert key not in await result_keys(client, "notes on rediscluster sessions")
        near = await ok(
            client,
            "recall",
            {"query": "notes on rediscluster sessions", "include_deprioritised": True},
        )
        # positive control: that query does reach the memory; only the hint did not fire
        assert [
            r.get("reinstate_candidate", False) for r in near["results"] if r["key"] == key
        ] == [False]
        hinted = await ok(
            client, "recall", {"query": "should sessions go back to a Redis cluster?"}
        )
        flagged = [r for r in hinted["results"] if r["key"] == key]
        assert flagged
        assert flagged[0]["reinstate_candidate"] is True
        assert (await result_keys(client, QUESTION, include_deprioritised=True))[0] == key
        index = await ok(client, "recall_index", {"query": QUESTION, "include_deprioritised": True})
        assert index["results"][0]["key"] == key
        await ok(client, "archive", {"key": key, "reason": "Postgres sessions are final"})
        assert key not in await result_keys(client, QUESTION, include_deprioritised=True)
        assert key not in await result_keys(client, "should sessions go back to a Redis cluster?")
        assert key not in [
            r["key"]
            for r in (
                await ok(client, "recall_index", {"query": QUESTION, "include_deprioritised": True})
            )["results"]
        ]


async def test_every_transition_reason_is_readable_afterwards(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        key = await remember(client, SESSIONS)
        await ok(client, "deprioritise", {"key": key, "reason": "first reason"})
        await ok(client, "archive", {"key": key, "reason": "second reason"})
        await ok(client, "reinstate", {"key": key, "reason": "third reason"})
        detail = (await ok(client, "recall_detail", {"keys": [key]}))["memories"][0]
        assert (detail["state"], detail["state_reason"], detail["state_actor"]) == (
            "active",
            "third reason",
            "test-write",
        )
        assert "conflict" in await refused(
            client, "reinstate", {"key": key, "reason": "already active"}
        )
        assert "reason" in await refused(client, "archive", {"key": key})
    history = mcp.engine.store.audit.history(key)
    assert [(e.action, e.reason, e.actor) for e in history[1:]] == [
        ("deprioritise", "first reason", "test-write"),
        ("archive", "second reason", "test-write"),
        ("reinstate", "third reason", "test-write"),
    ]


async def test_acting_by_query_returns_candidates_and_changes_nothing(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        key = await remember(client, SESSIONS)
        for tool in ("deprioritise", "archive", "forget"):
            answer = await ok(client, tool, {"query": "session state in redis"})
            assert (answer["status"], answer["acted"]) == ("needs_confirmation", False)
            assert answer["candidates"][0]["key"] == key
        assert (await ok(client, "recall_detail", {"keys": [key]}))["memories"][0][
            "state"
        ] == "active"
        none = await ok(client, "archive", {"query": "the weather in Lisbon"})
        assert none["candidates"] == []
        elsewhere = await ok(
            client, "forget", {"query": "session state in redis", "projects": ["beta"]}
        )
        assert elsewhere["candidates"] == []  # the same query found it in alpha above
        assert "either a key or a query" in await refused(
            client, "archive", {"key": key, "query": "x", "reason": "r"}
        )


async def test_project_actions_preview_then_confirm(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        keys = [
            await remember(client, text, project="shelved")
            for text in (SESSIONS, "The shelved app renders with Jinja2 and htmx.")
        ]
        preview = await ok(client, "deprioritise_project", {"project": "shelved"})
        assert (preview["status"], preview["would_affect"]) == ("preview", 2)
        done = await ok(
            client,
            "deprioritise_project",
            {"project": "shelved", "confirm": True, "reason": "on hold"},
        )
        assert done["affected"] == 2
        assert not set(keys) & set(await result_keys(client, QUESTION))
        details = (await ok(client, "recall_detail", {"keys": keys}))["memories"]
        assert [(m["state"], m["state_reason"], m["state_actor"]) for m in details] == [
            ("deprioritised", "on hold", "test-write")
        ] * 2
        back = await ok(
            client,
            "reinstate_project",
            {"project": "shelved", "confirm": True, "reason": "resumed"},
        )
        assert back["affected"] == 2
        assert keys[0] in await result_keys(client, QUESTION)
        assert "permission_denied" in await refused(
            client, "delete_project", {"project": "shelved"}
        )
    async with mcp.client("admin") as admin:
        assert (await ok(admin, "delete_project", {"project": "shelved"}))["would_affect"] == 2
        gone = await ok(
            admin, "delete_project", {"project": "shelved", "confirm": True, "reason": "cleanup"}
        )
        assert gone["affected"] == 2
        assert "not_found" in await refused(admin, "recall_detail", {"keys": [keys[0]]})


async def test_a_suppressed_term_hides_rewordings_while_the_abandonment_record_stays(
    mcp: McpHarness,
) -> None:
    question = "should the ORM layer use Tortoise for async models?"
    async with mcp.client("write") as client:
        old = await remember(client, "Plan: move the ORM layer to Tortoise for async support.")
        assert old in await result_keys(client, question, top_k=10)  # positive control
        logged = await ok(
            client,
            "log_abandoned",
            {
                "name": "Tortoise",
                "type": "library",
                "effort": 5,
                "reason": "its migrations broke twice",
                "project": "alpha",
            },
        )
        assert logged["suppressed"] == ["tortoise"]
        reworded = await remember(
            client, "Idea: async models via the Tortoise ORM could replace SQLAlchemy."
        )
        found = await ok(client, "recall", {"query": question, "top_k": 10})
        keys = [r["key"] for r in found["results"]]
        assert old not in keys
        assert reworded not in keys
        assert logged["key"] in keys
        assert found["warnings"][0]["memory"] == logged["key"]
        listed = (await ok(client, "list_suppressions"))["suppressions"]
        assert [(s["term"], s["auto"], s["hides"]) for s in listed] == [("tortoise", True, 2)]
        await ok(
            client, "unsuppress_topic", {"term": "tortoise", "reason": "giving it another try"}
        )
        assert {old, reworded} <= set(await result_keys(client, question, top_k=10))


async def test_suppress_topic_preview_then_commit(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        a = await remember(client, "Billing sends invoices through Stripe webhooks.")
        await remember(client, "The header has blue stripes.")
        preview = await ok(
            client,
            "suppress_topic",
            {"term": "stripe", "reason": "vendor dropped", "preview": True},
        )
        assert (preview["status"], preview["would_hide"], preview["sample"][0]["key"]) == (
            "preview",
            1,
            a,
        )
        assert (await ok(client, "list_suppressions"))["suppressions"] == []
        assert a in await result_keys(client, "how are invoices sent?")
        done = await ok(client, "suppress_topic", {"term": "stripe", "reason": "vendor dropped"})
        assert done["status"] == "suppressed"
        assert a not in await result_keys(client, "how are invoices sent?")


async def test_why_did_you_mention_finds_the_recall_that_surfaced_it(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        key = await remember(client, "Feature flags are read from LaunchDarkly at start-up.")
        await remember(client, "CI runs on GitHub Actions.")
        await ok(client, "recall", {"query": "how is CI set up?"})
        await ok(client, "recall", {"query": "where do feature flags come from?"})
        answer = await ok(client, "why_did_you_mention", {"topic": "LaunchDarkly"})
        assert answer["matched_by"] == "words"
        assert [(m["query"], m["key"], m["actor"]) for m in answer["mentions"]] == [
            ("where do feature flags come from?", key, "test-write")
        ]
        by_meaning = await ok(client, "why_did_you_mention", {"topic": "the feature toggle vendor"})
        assert by_meaning["matched_by"] == "meaning"
        assert by_meaning["mentions"][0]["key"] == key


async def test_recall_takes_project_as_a_name_or_a_list(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        mine = await remember(client, SESSIONS, project="alpha")
        theirs = await remember(
            client, "Session state lives in Memcached for the beta app.", project="beta"
        )
        # positive control
        assert {mine, theirs} <= set(await result_keys(client, QUESTION, top_k=10))
        assert theirs not in await result_keys(client, QUESTION, project="alpha")
        assert mine in await result_keys(client, QUESTION, project="alpha")
        assert {mine, theirs} <= set(await result_keys(client, QUESTION, project=["alpha", "beta"]))
        index = await ok(client, "recall_index", {"query": QUESTION, "project": "beta"})
        assert [r["key"] for r in index["results"]] == [theirs]


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("recall", {"query": "x", "project": "a b"}, "project name"),
    ("recall", {"query": "x", "project": ["ok", "../etc"]}, "project name"),
    (
        "recall",
        {"query": "x", "top_k": 0},
        "invalid_arguments: top_k: Input should be greater than or equal to 1",
    ),
    ("recall", {"query": "x", "top_k": 51}, "less than or equal to 50"),
    ("recall", {"query": "x", "as_of": "last blursday"}, "ISO 8601"),
    ("recall", {"query": "  "}, "query is empty"),
    (
        "log_abandoned",
        {"name": "celery", "reason": "r", "effort": 0},
        "invalid_arguments: effort: ",
    ),
    ("log_abandoned", {"name": "celery", "reason": "r", "effort": 6}, "less than or equal to 5"),
    ("log_abandoned", {"name": "!!!", "reason": "r", "effort": 4}, "approach name"),
    ("log_abandoned", {"name": "celery", "reason": " ", "effort": 4}, "reason is required"),
    (
        "log_abandoned",
        {"name": "celery", "reason": "r", "effort": 2, "project": "bad project!"},
        "project name",
    ),
    (
        "record_experience",
        {"key": "kenning:mem:episodic:01J9Z8Q4M5X7B2C3D4E5F6G7H8", "effort": 3, "outcome": "meh"},
        "'succeeded', 'pivoted' or 'abandoned'",
    ),
    ("suppress_topic", {"term": "", "reason": "r"}, "hint: name the word"),
    ("suppress_topic", {"term": "the", "reason": "r"}, "stop words"),
    ("suppress_topic", {"term": "redis", "reason": " "}, "reason is required"),
    ("deprioritise_project", {"project": "a{b}"}, "project name"),
    ("experience_summary", {"project": "a|b"}, "project name"),
    ("why_did_you_mention", {"topic": ""}, "topic is empty (hint:"),
    ("warn_if_abandoned", {"query": ""}, "query is empty"),
    ("archive", {"query": ""}, "query is empty"),
    ("unsuppress_topic", {"term": "never"}, "list_suppressions"),
]


async def test_bad_input_is_refused_with_a_hint_and_stores_nothing(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        for tool, arguments, expected in BAD_CALLS:
            message = await refused(client, tool, arguments)
            assert expected in message, (tool, arguments, message)
        assert (await ok(client, "memory_audit"))["total"] == 0
        assert (await ok(client, "list_suppressions"))["suppressions"] == []
        await ok(client, "log_abandoned", {"name": "celery", "reason": "r", "effort": 2})
        # positive control: the valid call stores
        assert (await ok(client, "memory_audit"))["total"] == 1
        key = await remember(client, SESSIONS)
        for arguments in (
            {"reinstate_hints": ["!!!"]},
            {"reinstate_hints": ["h"] * 11},
            {"reason": ""},
        ):
            await refused(client, "deprioritise", {"key": key, "reason": "r", **arguments})
        detail = (await ok(client, "recall_detail", {"keys": [key]}))["memories"][0]
        assert (detail["state"], detail["reinstate_hints"]) == ("active", [])
        assert [e.action for e in mcp.engine.store.audit.history(key)] == ["remember"]


async def test_memory_audit_never_lists_a_suppressed_memory_to_an_agent(mcp: McpHarness) -> None:
    async with mcp.client("write") as client:
        hidden = await remember(client, "Traefik terminates TLS at the edge.", project="edge")
        shown = await remember(client, "Caddy serves the docs site.", project="edge")
        before = (await ok(client, "memory_audit", {"projects": ["edge"]}))["page"]
        assert {i["key"] for i in before["items"]} == {hidden, shown}  # positive control
        await ok(client, "suppress_topic", {"term": "traefik", "reason": "migrated off it"})
        after = await ok(client, "memory_audit", {"projects": ["edge"]})
        assert ([i["key"] for i in after["page"]["items"]], after["page"]["withheld"]) == (
            [shown],
            1,
        )
        assert after["total"] == 2
        explained = await ok(client, "explain_memory", {"key": hidden})
        assert explained["suppressed_by"] == ["traefik"]
