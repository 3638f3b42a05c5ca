"""Every page over HTTP: it shows what the engine holds (HTML and the same data as JSON), every
action changes the engine state and links to its audit event, bad form input shows the form again
with the error and writes nothing, and an outage is an error page, never an empty list."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.experience import Approach
from kenning.ops.embedded import EmbeddedValkey
from tests.web_ui.conftest import Dashboard, contradiction, duplicates, remember, web_settings

AUDIT_LINK = re.compile(
    r'id="audit-link" href="/audit\?actor=web%3A(\w+)&amp;action=(\w+)&amp;event=([\d-]+)'
)


def audit_event(page: str, engine: Engine) -> dict[str, Any]:
    """The audit event a confirmation page links to, read back through the engine."""
    found = AUDIT_LINK.search(page)
    assert found is not None, page
    actor, action, event_id = found.groups()
    events: list[dict[str, Any]] = engine.history.audit_log(
        actor=f"web:{actor}", action=action
    ).public()["events"]
    matching = [e for e in events if e["id"] == event_id]
    assert len(matching) == 1
    return matching[0]


def test_overview_counts_and_its_json_match(web: Dashboard, engine: Engine) -> None:
    contradiction(engine)
    page = web.client("viewer").get("/")
    assert page.status_code == 200
    assert "<svg" in page.text
    data = web.client("viewer").get("/?format=json").json()
    assert data["counts"]["knowledge"]["active"] == 2
    assert data["total"] == 2
    assert data["open_contradictions"] == 1
    assert {e["action"] for e in data["recent"]} >= {"remember", "dispute"}


def test_memories_filter_and_paginate(web: Dashboard, engine: Engine) -> None:
    for i in range(26):
        remember(
            engine,
            f"Deployment note number {i}: the {i}th canary host is canary-{i}.internal",
            project="beta",
            tags=["deploy"] if i < 3 else [],
        )
    remember(engine, "The alpha service reads its configuration from Consul", project="alpha")
    viewer = web.client("viewer")
    first = viewer.get("/memories?project=beta&format=json").json()
    assert first["listed"]["page"]["total"] == 26
    assert len(first["listed"]["page"]["items"]) == 25
    second = viewer.get("/memories?project=beta&page=2&format=json").json()
    assert len(second["listed"]["page"]["items"]) == 1
    tagged = viewer.get("/memories?tag=deploy&format=json").json()["listed"]["page"]
    assert tagged["total"] == 3
    alpha = viewer.get("/memories?project=alpha").text
    assert "Consul" in alpha
    assert "canary" not in alpha
    bad = viewer.get("/memories?project=Not%20A%20Project")
    assert bad.status_code == 400
    assert "project" in bad.text


def test_bulk_archive_with_reason_and_refused_without(web: Dashboard, engine: Engine) -> None:
    keys = [
        remember(engine, f"Old runbook step {i}: restart the ingest queue by hand")
        for i in range(2)
    ]
    editor = web.client("editor")
    refused = editor.post(
        "/memories/bulk", data=web.form(editor, keys=keys, action="archive", reason="")
    )
    assert refused.status_code == 400
    assert "reason" in refused.text
    assert 'action="/memories/bulk"' in refused.text  # the list and its form again
    assert {engine.memories.get(k).state for k in keys} == {"active"}
    done = editor.post(
        "/memories/bulk",
        data=web.form(editor, keys=keys, action="archive", reason="the queue restarts itself now"),
    )
    assert done.status_code == 200, done.text
    assert {engine.memories.get(k).state for k in keys} == {"archived"}
    event = audit_event(done.text, engine)
    assert event["action"] == "archive"
    assert event["reason"] == "the queue restarts itself now"


def test_memory_page_actions_change_the_engine(web: Dashboard, engine: Engine) -> None:
    key = remember(engine, "The nightly export runs at 02:00 UTC", tags=["ops"])
    editor = web.client("editor")
    page = editor.get(f"/memory?key={key}")
    assert "The nightly export runs at 02:00 UTC" in page.text
    assert "remember" in page.text  # the history timeline
    edited = editor.post(
        "/memory",
        data=web.form(
            editor,
            key=key,
            do="edit",
            content=("The nightly export runs at 03:00 UTC"),
            reason="moved after the DST change",
        ),
    )
    assert edited.status_code == 200, edited.text
    assert engine.memories.get(key).content == "The nightly export runs at 03:00 UTC"
    assert audit_event(edited.text, engine)["key"] == key
    tags = editor.post(
        "/memory", data=web.form(editor, key=key, do="tags", add="export, nightly", remove="ops")
    )
    assert set(engine.memories.get(key).tags) == {"export", "nightly"}
    assert audit_event(tags.text, engine)["action"] == "retag"
    editor.post(
        "/memory", data=web.form(editor, key=key, do="verify", reason="checked the cron table")
    )
    assert engine.memories.get(key).trust == "verified"
    moved = editor.post(
        "/memory", data=web.form(editor, key=key, do="deprioritise", reason="rarely useful")
    )
    assert moved.status_code == 200
    assert engine.memories.get(key).state == "deprioritised"


def test_a_bad_edit_shows_the_form_again_and_changes_nothing(
    web: Dashboard, engine: Engine
) -> None:
    key = remember(engine, "The nightly export runs at 02:00 UTC")
    editor = web.client("editor")
    refused = editor.post("/memory", data=web.form(editor, key=key, do="edit", content="   "))
    assert refused.status_code == 400
    assert 'name="content"' in refused.text
    assert engine.memories.get(key).content == "The nightly export runs at 02:00 UTC"
    moved = editor.post("/memory", data=web.form(editor, key=key, do="archive", reason=""))
    assert moved.status_code == 400
    assert engine.memories.get(key).state == "active"


def test_search_shows_scores_warnings_and_what_suppression_hid(
    web: Dashboard, engine: Engine
) -> None:
    key = remember(engine, "We cache build artefacts in the shared S3 bucket")
    engine.experience.log_abandoned(
        Approach(name="celery", type="library", reason="workers leaked memory"),
        effort=3,
        project="alpha",
        actor="pytest",
    )
    viewer = web.client("viewer")
    before = viewer.get("/search?q=where+do+we+cache+build+artefacts&format=json").json()
    # positive control: found while not suppressed
    assert before["result"]["results"][0]["key"] == key
    page = viewer.get("/search?q=where+do+we+cache+build+artefacts").text
    assert "score" in page
    assert "similarity" in page
    warned = viewer.get("/search?q=should+we+use+celery+for+the+build+queue").text
    assert "workers leaked memory" in warned
    engine.suppressions.suppress("artefacts", "moving to a new store", actor="pytest")
    after = viewer.get("/search?q=where+do+we+cache+build+artefacts&format=json").json()
    assert key not in [r["key"] for r in after["result"]["results"]]
    assert [(h["key"], h["terms"]) for h in after["hidden"]] == [(key, ["artefacts"])]


def test_resolve_a_contradiction_and_a_refused_resolution(web: Dashboard, engine: Engine) -> None:
    record_id, _a, b = contradiction(engine)
    editor = web.client("editor")
    page = editor.get("/contradictions").text
    assert "Always use pickle" in page
    assert "Never use pickle" in page
    refused = editor.post(
        "/contradictions", data=web.form(editor, id=record_id, decision="both_valid", note="")
    )
    assert refused.status_code == 400
    assert "both_valid needs a note" in refused.text
    assert engine.contradictions.get(record_id).status == "open"
    done = editor.post(
        "/contradictions",
        data=web.form(
            editor, id=record_id, decision="keep_a", note="pickle is unsafe for shared caches"
        ),
    )
    assert done.status_code == 200, done.text
    assert engine.contradictions.get(record_id).status == "resolved"
    assert engine.memories.get(b).trust == "superseded"
    assert audit_event(done.text, engine)["action"] == "resolve_contradiction"


def test_merge_duplicates_and_a_refused_merge(web: Dashboard, engine: Engine) -> None:
    first, second = duplicates(engine)
    editor = web.client("editor")
    assert first in editor.get("/duplicates").text
    refused = editor.post(
        "/duplicates", data=web.form(editor, keep=first, others=[], reason="same")
    )
    assert refused.status_code == 400
    assert engine.memories.get(second).state == "active"
    done = editor.post(
        "/duplicates", data=web.form(editor, keep=first, others=[second], reason="same fact")
    )
    assert done.status_code == 200, done.text
    assert engine.memories.get(second).state == "archived"
    assert engine.memories.get(first).state == "active"
    assert audit_event(done.text, engine)["action"] == "merge_duplicates"


def test_suppress_after_the_preview_then_lift(web: Dashboard, engine: Engine) -> None:
    remember(engine, "The legacy billing cron posts invoices every hour")
    editor = web.client("editor")
    preview = editor.get("/suppressions?term=billing+cron&reason=retired+in+march")
    assert "It would hide <strong>1</strong> memories" in preview.text
    assert engine.suppressions.list_suppressions() == []  # a preview writes nothing
    unread = editor.post(
        "/suppressions", data=web.form(editor, term="billing cron", reason="retired")
    )
    assert unread.status_code == 400
    assert "read the impact preview first" in unread.text
    no_reason = editor.post(
        "/suppressions", data=web.form(editor, term="billing cron", reason="", reviewed="yes")
    )
    assert no_reason.status_code == 400
    assert engine.suppressions.list_suppressions() == []
    done = editor.post(
        "/suppressions",
        data=web.form(editor, term="billing cron", reason="retired in march", reviewed="yes"),
    )
    assert done.status_code == 200, done.text
    assert [s.suppression.term for s in engine.suppressions.list_suppressions()] == ["billing cron"]
    assert audit_event(done.text, engine)["action"] == "suppress"
    unread_lift = editor.post(
        "/suppressions/lift", data=web.form(editor, term="billing cron", reason="back")
    )
    assert unread_lift.status_code == 400
    assert "read what lifting brings back first" in unread_lift.text
    assert len(engine.suppressions.list_suppressions()) == 1
    lifting = editor.get("/suppressions?lift=billing+cron")
    assert "Lifting it brings back <strong>1</strong> memories" in lifting.text
    assert len(engine.suppressions.list_suppressions()) == 1  # the preview lifts nothing
    lifted = editor.post(
        "/suppressions/lift",
        data=web.form(editor, term="billing cron", reason="back", reviewed="yes"),
    )
    assert lifted.status_code == 200
    assert engine.suppressions.list_suppressions() == []


def test_backup_download_upload_dry_run_and_restore(web: Dashboard, engine: Engine) -> None:
    key = remember(engine, "Production runs on three availability zones")
    admin = web.client("admin")
    bad = admin.post("/backups", data=web.form(admin, label="Not Allowed!"))
    assert bad.status_code == 400
    assert engine.backups.list_backups() == []
    made = admin.post("/backups", data=web.form(admin, label="before"))
    assert made.status_code == 200, made.text
    name = engine.backups.list_backups()[0].file
    assert audit_event(made.text, engine)["action"] == "backup"
    body = admin.get(f"/backups/file?file={name}")
    assert body.status_code == 200
    assert key in body.text
    engine.lifecycle.forget(key, confirm=True, actor="pytest", reason="oops")
    report = admin.get(f"/backups/dry-run?file={name}")
    assert "Nothing has been written yet" in report.text
    assert '<th scope="row">memories</th><td>1</td><td>0</td><td>0</td>' in report.text  # add 1
    assert not engine.store.memories.exists(key)  # the dry run wrote nothing
    unread = admin.post("/backups/restore", data=web.form(admin, file=name))
    assert unread.status_code == 400
    assert not engine.store.memories.exists(key)
    done = admin.post("/backups/restore", data=web.form(admin, file=name, reviewed="yes"))
    assert done.status_code == 200, done.text
    assert engine.memories.get(key).content == "Production runs on three availability zones"
    copy = name.replace("-before.json", "-copy.json")
    uploaded = admin.post(
        "/backups/upload", data=web.form(admin), files={"file": (copy, body.content)}
    )
    assert uploaded.status_code == 200, uploaded.text
    assert "Dry run of " + copy in uploaded.text
    damaged = admin.post(
        "/backups/upload",
        data=web.form(admin),
        files={"file": (name.replace("-before", "-broken"), b"{not json")},
    )
    assert damaged.status_code == 400
    assert sorted(b.file for b in engine.backups.list_backups()) == sorted([name, copy])


def test_experience_shows_the_graveyard_and_why_a_memory_was_mentioned(
    web: Dashboard, engine: Engine
) -> None:
    engine.experience.log_abandoned(
        Approach(name="celery", type="library", reason="workers leaked memory"),
        effort=4,
        project="alpha",
        actor="pytest",
    )
    key = remember(engine, "The build queue runs on arq with Redis")
    viewer = web.client("viewer")
    page = viewer.get("/experience?project=alpha")
    assert page.status_code == 200
    assert "workers leaked memory" in page.text
    never = viewer.get("/experience?topic=arq+build+queue&format=json").json()["why"]
    assert never["mentions"] == []  # positive control: nothing recalled it yet
    viewer.get("/search?q=what+runs+the+build+queue")
    asked = viewer.get("/experience?topic=arq+build+queue&format=json").json()["why"]
    assert [(m["key"], m["actor"]) for m in asked["mentions"]] == [(key, "web:viewer")]


def test_projects_list_and_one_project(web: Dashboard, engine: Engine) -> None:
    viewer = web.client("viewer")
    assert "No project has a context yet" in viewer.get("/projects").text
    engine.projects.set(
        "kenning-api",
        description="The public API",
        stack=["python", "valkey"],
        conventions=None,
        state="v2 in review",
        actor="pytest",
    )
    remember(engine, "The API rate limit is 100 requests a minute", project="kenning-api")
    listed = viewer.get("/projects?format=json").json()
    assert [p["name"] for p in listed["projects"]] == ["kenning-api"]
    one = viewer.get("/projects?name=kenning-api&format=json").json()["detail"]
    assert one["project"]["state"] == "v2 in review"
    assert one["memories"]["knowledge"] == 1
    assert viewer.get("/projects?name=Bad%20Name").status_code == 400


def test_audit_log_filters(web: Dashboard, engine: Engine) -> None:
    key = remember(engine, "The VPN gateway moved to 10.8.0.1")
    engine.lifecycle.archive(key, reason="VPN retired", actor="someone")
    viewer = web.client("viewer")
    archived = viewer.get("/audit?action=archive&format=json").json()["events"]
    assert [(e["actor"], e["key"]) for e in archived] == [("someone", key)]
    by_key = viewer.get(f"/audit?key={key}&format=json").json()["events"]
    assert [e["action"] for e in by_key] == ["archive", "remember"]
    assert "VPN retired" in viewer.get("/audit?actor=someone").text


def test_settings_are_read_only_with_secrets_masked(
    web: Dashboard, engine: Engine, settings: Settings, tmp_path: Path
) -> None:
    secret = Dashboard(
        engine, web_settings(settings, tmp_path, valkey_url="redis://:hunter2secret@10.0.0.9:6379")
    )
    page = secret.client("admin").get("/settings").text
    assert "KENNING_VALKEY_URL" in page
    assert "hunter2secret" not in page
    assert "•••••• (set)" in page
    assert "KENNING_WEB_PORT" in page


def test_unknown_memory_is_a_not_found_page(
    web: Dashboard, engine: Engine, settings: Settings
) -> None:
    missing = web.client("viewer").get(
        f"/memory?key={settings.key_prefix}mem:knowledge:01JZZZZZZZZZZZZZZZZZZZZZZZ"
    )
    assert missing.status_code == 404
    assert "no memory" in missing.text


def test_healthz_and_metrics(web: Dashboard) -> None:
    client = web.client("viewer")
    client.get("/memories")
    health = client.get("/healthz").json()
    assert health["status"] == "ok"
    metrics = client.get("/metrics").text
    assert 'kenning_web_requests_total{route="memories",status="200"} 1.0' in metrics


def test_an_outage_is_an_error_page_never_an_empty_list(
    doomed_web: Dashboard, doomed_valkey: EmbeddedValkey
) -> None:
    web, settings = doomed_web, doomed_valkey.settings
    remember(web.engine, "Outages must be loud on the dashboard too")
    viewer: TestClient = web.client("viewer")
    assert "Outages must be loud" in viewer.get("/memories").text  # positive control
    doomed_valkey.stop()
    for path in (
        "/",
        "/memories",
        "/search?q=outages",
        "/contradictions",
        "/duplicates",
        "/suppressions",
        "/audit",
        "/telemetry",
    ):
        page = viewer.get(path)
        assert page.status_code == 503, path
        assert "Memory could NOT be checked" in page.text
        assert "not an empty result" in page.text
        assert str(settings.valkey_port) not in page.text  # internals stay in the log
        assert "No memory matches" not in page.text
    assert viewer.get("/healthz").status_code == 503


def test_search_states_the_date_window_it_used(web: Dashboard, engine: Engine) -> None:
    key = remember(engine, "Incident: the checkout service returned 502s.", event_date="2024-11-05")
    viewer = web.client("viewer")
    found = viewer.get("/search?q=what+happened+in+November+2024&format=json").json()["result"]
    assert [r["key"] for r in found["results"]] == [key]
    assert found["window"]["from"] == "2024-11-01"
    page = viewer.get("/search?q=what+happened+in+November+2024").text
    assert "Date window: <strong>2024-11-01 to 2024-11-30</strong>" in page
    # positive control: a query without a date states no window
    assert "Date window" not in viewer.get("/search?q=checkout+502s").text


def test_search_keeps_weak_candidates_apart(web: Dashboard, engine: Engine) -> None:
    key = remember(engine, "ERR-4312 means the signing key of the invoice API expired.")
    viewer = web.client("viewer")
    page = viewer.get("/search?q=what+does+ERR-4999+mean").text
    assert "No confident answer: weak candidates" in page
    assert key in page
    # positive control: the stored code is an answer, with no weak section
    sure = viewer.get("/search?q=what+does+ERR-4312+mean").text
    assert "No confident answer" not in sure
    assert key in sure
