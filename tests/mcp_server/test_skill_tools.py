"""The skill tools through a real MCP client: an agent proposes, only an
admin (or a person) approves."""

from __future__ import annotations

from kenning.knowledge import skill_doc
from tests.kenning.skill_history import DO_RULE, DOMAIN, VACUUM_RULE, seed
from tests.mcp_server.conftest import McpHarness, ok, refused


async def test_a_write_token_cannot_approve_its_proposal_and_an_admin_can(mcp: McpHarness) -> None:
    history = seed(mcp.engine)
    async with mcp.client("write") as agent:
        proposal = await ok(agent, "compile_skill", {"domain": DOMAIN})
        assert proposal["status"] == "pending"
        assert f"- {DO_RULE} [" in proposal["body"]
        assert "permission_denied" in await refused(
            agent, "approve_skill", {"proposal_id": proposal["id"], "sha": proposal["sha"]}
        )
        assert "permission_denied" in await refused(agent, "bless", {"key": history.vacuum})
        assert "conflict" in await refused(agent, "write_skill", {"proposal_id": proposal["id"]})
        assert "not_found" in await refused(agent, "get_skill", {"domain": DOMAIN})
    async with mcp.client("admin") as admin:
        other = await refused(
            admin, "approve_skill", {"proposal_id": proposal["id"], "sha": "a" * 64}
        )
        assert other.startswith("conflict:")
        approved = await ok(
            admin, "approve_skill", {"proposal_id": proposal["id"], "sha": proposal["sha"]}
        )
        assert approved["status"] == "approved"
    assert mcp.engine.skills.proposal(proposal["id"]).approved_by == "test-admin"
    async with mcp.client("write") as agent:
        written = await ok(agent, "write_skill", {"proposal_id": proposal["id"]})
        assert written["sha"] == proposal["sha"]
        got = await ok(agent, "get_skill", {"domain": DOMAIN})
        assert got["body"] == proposal["body"]
        assert got["written_by"] == "test-write"
        found = await ok(agent, "find_skills", {"query": "add an index to a busy postgres table"})
        assert [s["domain"] for s in found["skills"]] == [DOMAIN]
        assert (await ok(agent, "find_skills", {"query": "knitting a wool scarf"}))["skills"] == []


async def test_bless_and_promote_feed_the_next_proposal(mcp: McpHarness) -> None:
    history = seed(mcp.engine)
    async with mcp.client("write") as agent:
        before = await ok(agent, "compile_skill", {"domain": DOMAIN, "mode": "preview"})
        assert VACUUM_RULE in [h["rule"] for h in before["held"]]
        fact = await ok(
            agent,
            "remember",
            {
                "content": "The Postgres manual: CREATE INDEX CONCURRENTLY takes "
                "longer but does not block writes.",
                "namespace": "knowledge",
            },
        )
        await ok(
            agent,
            "promote_knowledge",
            {"key": fact["key"], "domain": DOMAIN, "reason": "from the manual"},
        )
        assert "invalid_input" in await refused(
            agent, "promote_knowledge", {"key": history.orders, "domain": DOMAIN}
        )
        assert "invalid_input" in await refused(agent, "compile_skill", {"domain": "Not A Name!"})
    async with mcp.client("admin") as admin:
        await ok(admin, "bless", {"key": history.vacuum, "reason": "checked"})
    async with mcp.client("write") as agent:
        after = await ok(agent, "compile_skill", {"domain": DOMAIN, "mode": "preview"})
    rules = skill_doc.parse(after["body"]).rules
    assert VACUUM_RULE in [r.text for r in rules if r.section == "do"]
    assert [r.section for r in rules].count("reference") == 1
    actions = [e.action for e in mcp.engine.store.audit.history(history.vacuum)]
    assert actions[-1] == "bless"
    assert mcp.engine.store.audit.history(fact["key"])[-1].action == "promote_knowledge"
