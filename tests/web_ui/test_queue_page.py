"""The queue page (parked jobs with their reason; requeue and drop, audited) and the provenance of
a model-derived memory on its detail page."""

from __future__ import annotations

from kenning.engine import Engine
from kenning.knowledge.enrichment import PROMPT_VERSION, derived_fact
from kenning.memory.memories import Draft
from tests.web_ui.conftest import Dashboard


def park(engine: Engine, key: str, error: str) -> str:
    queue = engine.enrichment.queue
    queue.push("extract_facts", {"key": key})
    (job,) = queue.claim("pytest", count=1, visibility_ms=60_000)
    queue.park(job, error)
    return engine.enrichment.parked()[0].id


def test_parked_jobs_show_their_reason_and_are_requeued_or_dropped(
    web: Dashboard, engine: Engine
) -> None:
    first = park(engine, "k:one", "extract_facts: the LLM's reply was not JSON")
    second = park(engine, "k:two", "extract_facts: the model's answer held no JSON object")
    viewer = web.client("viewer")
    page = viewer.get("/queue")
    assert page.status_code == 200
    assert "the LLM&#39;s reply was not JSON" in page.text
    assert first in page.text
    assert second in page.text
    assert 'action="/queue"' not in page.text  # a viewer sees no form
    editor = web.client("editor")
    assert 'action="/queue"' in editor.get("/queue").text
    done = editor.post("/queue", data=web.form(editor, "/queue", id=first, do="requeue"))
    assert done.status_code == 200, done.text
    assert "queue_requeue" in done.text
    dropped = editor.post("/queue", data=web.form(editor, "/queue", id=second, do="drop"))
    assert dropped.status_code == 200, dropped.text
    status = engine.enrichment.status()
    assert (status.waiting, status.parked) == (1, 0)
    again = editor.post("/queue", data=web.form(editor, "/queue", id=second, do="drop"))
    assert again.status_code == 404
    assert "no parked job" in again.text


def test_a_derived_memory_shows_its_provenance(web: Dashboard, engine: Engine) -> None:
    source = engine.memories.get(
        engine.memories.remember(
            Draft("The billing export moved to 02:30 UTC after the March review.", project="alpha"),
            actor="pytest",
        ).key
    )
    fact = derived_fact(source, "The billing export runs at 02:30 UTC.", "claude-x", flagged=False)
    key = engine.memories.remember(fact, actor="llm:enrichment").key
    page = web.client("viewer").get(f"/memory?key={key}")
    assert "Provenance" in page.text
    assert "written by the model (llm:extract_facts)" in page.text
    assert "claude-x" in page.text
    assert PROMPT_VERSION in page.text
    assert source.key in page.text
    plain = web.client("viewer").get(f"/memory?key={source.key}")
    assert "Provenance" not in plain.text  # the positive control: a person's memory has none
