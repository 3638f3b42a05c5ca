"""The curation pages over HTTP: skills (approve exactly the reviewed sha, reject with a reason),
feeds (validation, last fetch, errors, what was ingested), accounts (admin only: create, role,
disable, reset, delete; never yourself out of admin, never the last admin), duplicates "keep
both", and the memories list's trust and source filters. Each action is checked through the
engine and links to its audit event; bad input shows the form again and writes nothing;
an outage is an error page."""

from __future__ import annotations

import pytest

from kenning.access.accounts import Accounts
from kenning.core.clock import ManualClock
from kenning.core.errors import Conflict
from kenning.engine import Engine
from kenning.knowledge.skill_records import Proposal
from kenning.memory.memories import Draft
from kenning.ops.embedded import EmbeddedValkey
from tests.kenning.skill_history import DOMAIN, seed
from tests.web_ui.conftest import (
    FAST_HASHER,
    PASSWORD,
    Dashboard,
    duplicates,
    login,
    remember,
)
from tests.web_ui.test_pages import audit_event

DAY = 86_400.0
NEW_PASSWORD = "a brand new passphrase"


def two_proposals(engine: Engine, clock: ManualClock) -> tuple[Proposal, Proposal]:
    """Two pending proposals of one domain with different shas (a person
    blessed a source in between)."""
    history = seed(engine)
    first = engine.skills.compile_skill(DOMAIN, actor="agent")
    clock.advance(DAY)
    engine.skills.bless(history.vacuum, actor="pytest", reason="checked on the replica")
    second = engine.skills.compile_skill(DOMAIN, actor="agent")
    assert first.sha != second.sha
    return first, second


# --- skills --------------------------------------------------------------------------------
def test_skills_page_shows_the_diff_and_risks_and_writes_exactly_the_reviewed_sha(
    web: Dashboard, engine: Engine, clock: ManualClock
) -> None:
    first, second = two_proposals(engine, clock)
    viewer = web.client("viewer")
    page = viewer.get("/skills")
    assert page.status_code == 200
    assert first.id in page.text
    assert first.sha in page.text
    assert first.diff.splitlines()[2] in page.text.replace("&#39;", "'").replace("&quot;", '"')
    assert {c["risk"] for c in first.changes} <= {"high", "medium", "low"}
    assert f"risk-{first.changes[0]['risk']}" in page.text
    assert "Approve and write" not in page.text  # a viewer reads, an admin decides
    listed = viewer.get("/skills?format=json").json()
    assert [p["id"] for p in listed["proposals"]] == [second.id, first.id]
    assert listed["pending"] == 2

    admin = web.client("admin")
    assert "Approve and write" in admin.get("/skills").text
    newer = admin.post(
        "/skills/approve", data=web.form(admin, "/skills", id=first.id, sha=second.sha)
    )
    assert newer.status_code == 409, newer.text
    assert "approve the sha shown with the proposal you reviewed" in newer.text
    assert engine.skills.proposal(first.id).status == "pending"  # nothing was approved or written
    assert engine.skills.all() == []
    unnamed = admin.post("/skills/approve", data=web.form(admin, "/skills", id=first.id, sha=""))
    assert unnamed.status_code == 400
    assert engine.skills.proposal(first.id).status == "pending"

    done = admin.post(
        "/skills/approve", data=web.form(admin, "/skills", id=first.id, sha=first.sha)
    )
    assert done.status_code == 200, done.text
    assert engine.skills.proposal(first.id).status == "written"
    assert engine.skills.proposal(first.id).approved_by == "web:admin"
    assert engine.skills.get(DOMAIN).sha == first.sha
    assert audit_event(done.text, engine)["action"] == "skill_write"
    written = viewer.get("/skills?status=written")
    assert first.id in written.text
    assert DOMAIN in written.text.split("Written skills", 1)[1]


def test_rejecting_a_proposal_needs_a_reason(
    web: Dashboard, engine: Engine, clock: ManualClock
) -> None:
    first, _second = two_proposals(engine, clock)
    admin = web.client("admin")
    silent = admin.post("/skills/reject", data=web.form(admin, "/skills", id=first.id, reason=""))
    assert silent.status_code == 400
    assert "say why the proposal is rejected" in silent.text
    assert engine.skills.proposal(first.id).status == "pending"
    done = admin.post(
        "/skills/reject", data=web.form(admin, "/skills", id=first.id, reason="the gotcha is stale")
    )
    assert done.status_code == 200, done.text
    assert engine.skills.proposal(first.id).status == "rejected"
    event = audit_event(done.text, engine)
    assert (event["action"], event["reason"]) == ("skill_reject", "the gotcha is stale")
    assert first.id not in admin.get("/skills").text  # no longer pending
    assert first.id in admin.get("/skills?status=rejected").text
    bad = admin.get("/skills?status=bogus")
    assert bad.status_code == 400
    assert "use one of pending" in bad.text


def test_a_proposal_approved_over_mcp_is_written_by_an_editor(
    web: Dashboard, engine: Engine, clock: ManualClock
) -> None:
    first, second = two_proposals(engine, clock)
    editor = web.client("editor")
    pending = editor.post("/skills/write", data=web.form(editor, "/skills", id=second.id))
    assert pending.status_code == 409  # only an approved proposal is written
    assert engine.skills.all() == []
    engine.skills.approve(second.id, second.sha, "mcp:root")
    assert f"Write {DOMAIN}" in editor.get("/skills?status=approved").text
    done = editor.post("/skills/write", data=web.form(editor, "/skills", id=second.id))
    assert done.status_code == 200, done.text
    assert engine.skills.get(DOMAIN).sha == second.sha
    assert engine.skills.proposal(first.id).status == "pending"
    assert audit_event(done.text, engine)["action"] == "skill_write"


# --- accounts -----------------------------------------------------------------------------
def accounts_of(engine: Engine) -> Accounts:
    return Accounts(engine.store, engine.ctx.clock, hasher=FAST_HASHER)


def test_an_admin_creates_an_account_that_can_log_in(web: Dashboard, engine: Engine) -> None:
    admin = web.client("admin")
    assert "editor" in admin.get("/accounts").text
    new = {"do": "create", "username": "carol", "role": "editor"}
    differ = admin.post(
        "/accounts", data=web.form(admin, "/accounts", **new, password=PASSWORD, again="other")
    )
    assert differ.status_code == 400
    assert "the two passwords differ" in differ.text
    assert 'value="carol"' in differ.text  # the form again, filled in
    short = admin.post(
        "/accounts", data=web.form(admin, "/accounts", **new, password="short", again="short")
    )
    assert short.status_code == 400
    assert "10 to 1024 characters" in short.text
    bad_name = admin.post(
        "/accounts",
        data=web.form(
            admin, "/accounts", **{**new, "username": "Carol!"}, password=PASSWORD, again=PASSWORD
        ),
    )
    assert bad_name.status_code == 400
    assert accounts_of(engine).get("carol") is None  # nothing written by any refused form
    taken = admin.post(
        "/accounts",
        data=web.form(
            admin, "/accounts", **{**new, "username": "viewer"}, password=PASSWORD, again=PASSWORD
        ),
    )
    assert taken.status_code == 409
    assert accounts_of(engine).get("viewer").role == "viewer"  # type: ignore[union-attr]

    done = admin.post(
        "/accounts", data=web.form(admin, "/accounts", **new, password=PASSWORD, again=PASSWORD)
    )
    assert done.status_code == 200, done.text
    assert PASSWORD not in done.text
    assert accounts_of(engine).get("carol").role == "editor"  # type: ignore[union-attr]
    assert audit_event(done.text, engine)["action"] == "account_create"
    carol = web.app_client()
    assert login(carol, "carol").status_code == 303
    assert carol.get("/").status_code == 200
    assert carol.get("/accounts").status_code == 403  # an editor does not manage accounts


def test_role_disable_reset_and_delete_end_the_right_sessions(
    web: Dashboard, engine: Engine, clock: ManualClock
) -> None:
    admin, editor, viewer = web.client("admin"), web.client("editor"), web.client("viewer")
    done = admin.post(
        "/accounts", data=web.form(admin, "/accounts", do="role", username="viewer", role="editor")
    )
    assert done.status_code == 200, done.text
    assert accounts_of(engine).get("viewer").role == "editor"  # type: ignore[union-attr]
    # the session takes the new role at once
    assert "needs the" not in viewer.get("/duplicates").text
    clock.advance(60)  # sessions created before a disable or a reset die; the clock is manual here
    assert editor.get("/").status_code == 200  # positive control
    disabled = admin.post(
        "/accounts", data=web.form(admin, "/accounts", do="disable", username="editor")
    )
    assert disabled.status_code == 200, disabled.text
    assert editor.get("/").status_code == 303
    admin.post("/accounts", data=web.form(admin, "/accounts", do="enable", username="editor"))
    assert accounts_of(engine).get("editor").disabled is False  # type: ignore[union-attr]
    assert editor.get("/").status_code == 303  # enabling again does not revive the old session
    assert viewer.get("/").status_code == 200
    reset = admin.post(
        "/accounts",
        data=web.form(
            admin,
            "/accounts",
            do="password",
            username="viewer",
            password=NEW_PASSWORD,
            again=NEW_PASSWORD,
        ),
    )
    assert reset.status_code == 200, reset.text
    assert viewer.get("/").status_code == 303
    assert login(web.app_client(), "viewer").status_code == 401
    assert login(web.app_client(), "viewer", NEW_PASSWORD).status_code == 303
    unconfirmed = admin.post(
        "/accounts", data=web.form(admin, "/accounts", do="delete", username="viewer")
    )
    assert unconfirmed.status_code == 400
    assert accounts_of(engine).get("viewer") is not None
    again = web.app_client()
    assert login(again, "viewer", NEW_PASSWORD).status_code == 303
    deleted = admin.post(
        "/accounts",
        data=web.form(admin, "/accounts", do="delete", username="viewer", confirm="viewer"),
    )
    assert deleted.status_code == 200, deleted.text
    assert accounts_of(engine).get("viewer") is None
    assert audit_event(deleted.text, engine)["action"] == "account_delete"
    clock.advance(60)
    accounts_of(engine).create("viewer", PASSWORD, "admin", actor="pytest")
    # a new account of the same name does not inherit the session
    assert again.get("/").status_code == 303


def test_an_admin_never_locks_themselves_out(web: Dashboard, engine: Engine) -> None:
    admin = web.client("admin")
    for change in (
        {"do": "role", "role": "editor"},
        {"do": "disable"},
        {"do": "delete", "confirm": "admin"},
    ):
        refused = admin.post(
            "/accounts", data=web.form(admin, "/accounts", username="admin", **change)
        )
        assert refused.status_code == 400, change
        assert "your own account" in refused.text
    found = accounts_of(engine).get("admin")
    assert found is not None
    assert (found.role, found.disabled) == ("admin", False)
    with pytest.raises(Conflict, match="last enabled admin"):  # the engine's rule, for every door
        accounts_of(engine).disable("admin", actor="pytest")
    with pytest.raises(Conflict, match="last enabled admin"):
        accounts_of(engine).set_role("admin", "viewer", actor="pytest")
    accounts_of(engine).create("second", PASSWORD, "admin", actor="pytest")  # positive control
    assert accounts_of(engine).set_role("admin", "viewer", actor="pytest").role == "viewer"


def test_the_accounts_form_needs_the_csrf_token(web: Dashboard, engine: Engine) -> None:
    admin = web.client("admin")
    fields = {
        "do": "create",
        "username": "dave",
        "role": "viewer",
        "password": PASSWORD,
        "again": PASSWORD,
    }
    for sent in ({}, {"csrf": "forged-token"}):
        refused = admin.post("/accounts", data={**fields, **sent})
        assert refused.status_code == 403
        assert accounts_of(engine).get("dave") is None
    accepted = admin.post("/accounts", data=web.form(admin, "/accounts", **fields))
    assert accepted.status_code == 200, accepted.text
    assert accounts_of(engine).get("dave") is not None


# --- duplicates: keep both ------------------------------------------------------------------
def test_keep_both_records_the_decision_and_the_pair_is_not_proposed_again(
    web: Dashboard, engine: Engine
) -> None:
    first, second = duplicates(engine)
    editor = web.client("editor")
    assert "Keep all of cluster 1" in editor.get("/duplicates").text
    silent = editor.post(
        "/duplicates/keep", data=web.form(editor, "/duplicates", members=[first, second], reason="")
    )
    assert silent.status_code == 400
    assert "say why these are not duplicates" in silent.text
    assert engine.duplicates.find("knowledge").cluster_count == 1
    done = editor.post(
        "/duplicates/keep",
        data=web.form(
            editor,
            "/duplicates",
            members=[first, second],
            reason="one is staging, one is the old staging",
        ),
    )
    assert done.status_code == 200, done.text
    assert engine.duplicates.find("knowledge").cluster_count == 0
    assert {engine.memories.get(k).state for k in (first, second)} == {"active"}
    event = audit_event(done.text, engine)
    assert (event["action"], event["reason"]) == (
        "keep_duplicates",
        "one is staging, one is the old staging",
    )
    assert "No near-duplicates" in editor.get("/duplicates").text


# --- memories: trust and source filters ---------------------------------------------------
def test_memories_filter_by_trust_and_source(web: Dashboard, engine: Engine) -> None:
    verified = remember(engine, "The payments service retries webhooks three times")
    stated = remember(engine, "The search service caches facets for five minutes")
    fact = engine.memories.remember(
        Draft(
            content="Grafana dashboards live in the ops repository", project="alpha", kind="fact"
        ),
        actor="pytest",
    ).key
    engine.belief.verify(verified, "checked the code", actor="pytest")
    viewer = web.client("viewer")
    everything = viewer.get("/memories?format=json").json()["listed"]["page"]["items"]
    assert {verified, stated, fact} <= {m["key"] for m in everything}  # positive control
    trusted = viewer.get("/memories?trust=verified&format=json").json()["listed"]["page"]["items"]
    assert [m["key"] for m in trusted] == [verified]
    facts = viewer.get("/memories?source=fact&format=json").json()["listed"]["page"]["items"]
    assert [m["key"] for m in facts] == [fact]
    page = viewer.get("/memories?trust=verified")
    assert "<option selected>verified</option>" in page.text
    for bad in ("trust=trusted", "source=rumour"):
        refused = viewer.get(f"/memories?{bad}")
        assert refused.status_code == 400, bad
        assert "use one of" in refused.text


# --- feeds --------------------------------------------------------------------------------
def test_feeds_page_shows_validation_last_fetch_errors_and_ingested(feeds_web: Dashboard) -> None:
    engine = feeds_web.engine
    viewer = feeds_web.client("viewer")
    before = viewer.get("/feeds?format=json").json()
    assert {f["name"]: f["health"] for f in before["feeds"]} == {
        "python-news": "never fetched",
        "broken": "never fetched",
        "Bad Name": "invalid",
    }
    for name in ("python-news", "broken"):
        engine.feeds.run(engine.feeds.feed(name))
    page = viewer.get("/feeds")
    assert page.status_code == 200
    rows = {f["name"]: f for f in viewer.get("/feeds?format=json").json()["feeds"]}
    assert rows["python-news"]["health"] == "ok"
    assert rows["python-news"]["state"]["last_counts"]["new"] == 3
    assert rows["broken"]["health"] == "failing"
    assert "500" in rows["broken"]["state"]["last_error"]
    assert "line 7" in rows["Bad Name"]["problem"]
    assert "new 3" in page.text
    assert rows["broken"]["state"]["last_error"] in page.text
    assert "invalid (disabled)" in page.text


# --- an outage ----------------------------------------------------------------------------
def test_an_outage_on_the_curation_pages_is_an_error_page(
    doomed_web: Dashboard, doomed_valkey: EmbeddedValkey
) -> None:
    admin = doomed_web.client("admin")
    assert "viewer" in admin.get("/accounts").text  # positive control
    doomed_valkey.stop()
    for path in ("/skills", "/feeds", "/accounts"):
        page = admin.get(path)
        assert page.status_code == 503, path
        assert "Memory could NOT be checked" in page.text
        assert "No accounts" not in page.text
