"""Decisions and creations through the dashboard in real headless Chromium (docs/reliability.md):
the memories list's multi-select transition applies to every selected memory or to none, naming
the ones in the way; an account change chosen on a page that no longer shows the account as it
is writes nothing; the backup form submitted twice at once writes one backup."""

from __future__ import annotations

from pathlib import Path

from playwright.async_api import Browser

from kenning.engine import Engine
from tests.web_ui.conftest import Dashboard, remember
from tests.web_ui.test_browser import (  # noqa: F401 (fixtures)
    live,
    menu,
    shots,
    signed_in,
)

NOTES = [
    "The nightly export job writes parquet files to the cold bucket",
    "Grafana alerts for the export job page the data team on call",
    "The export job's retries back off to one attempt per hour",
]


async def test_a_multi_select_transition_applies_to_all_or_none(
    browser: Browser,
    live: str,  # noqa: F811
    engine: Engine,
    shots: Path,  # noqa: F811
) -> None:
    keys = [remember(engine, text, project="exports") for text in NOTES]
    page = await signed_in(browser, live, "editor")
    await page.goto(f"{live}/memories?project=exports")
    for key in keys:
        await page.get_by_label(f"select {key}").check()
    # someone else archives one of them while the page is open
    engine.lifecycle.archive(keys[1], reason="superseded by the runbook", actor="ana")
    await page.get_by_label("Action").select_option("archive")
    await page.get_by_label("Reason (required)").fill("the export job was retired")
    await page.get_by_role("button", name="Apply").click()
    alert = page.get_by_role("alert")
    await alert.wait_for()
    said = " ".join((await alert.inner_text()).split())
    assert (
        f"1 memory of the 3 selected changed since you saw them: {keys[1]} (active -> archived)"
        in said
    )
    assert "nothing was changed" in said
    await page.screenshot(path=str(shots / "dashboard-bulk-refused.png"), full_page=True)
    # none moved, and no event beyond ana's archive
    assert [engine.memories.get(k).state for k in keys] == ["active", "archived", "active"]
    assert [e.actor for e in engine.store.audit.recent(action="archive")] == ["ana"]
    # the selection is shown again, still ticked: untick the one in the way and apply
    for key in keys:
        assert await page.get_by_label(f"select {key}").is_checked()
    await page.get_by_label(f"select {keys[1]}").uncheck()
    await page.get_by_role("button", name="Apply").click()
    await page.wait_for_selector("h1.ok")
    assert [engine.memories.get(k).state for k in keys] == ["archived"] * 3
    by_editor = [e.key for e in engine.store.audit.recent(action="archive") if e.actor != "ana"]
    assert sorted(by_editor) == sorted([keys[0], keys[2]])
    await page.context.close()


# the create form's own fields, posted twice at once from the page (a double click)
SUBMIT_TWICE = """async () => {
    const form = document.querySelector('form[action="/backups"]');
    const post = () => fetch('/backups', {method: 'POST', body: new FormData(form)});
    const answers = await Promise.all([post(), post()]);
    return Promise.all(answers.map(async a => [a.status, await a.text()]));
}"""


async def test_the_backup_form_submitted_twice_at_once_writes_one_backup(
    browser: Browser,
    live: str,  # noqa: F811
    engine: Engine,
) -> None:
    remember(engine, "The nightly export job writes parquet files to the cold bucket")
    page = await signed_in(browser, live, "admin")
    await menu(page, "Backups")
    await page.get_by_label("Label (optional: a-z, 0-9, -)").fill("twice")
    answers = await page.evaluate(SUBMIT_TWICE)
    assert [status for status, _ in answers] == [200, 200]
    (written,) = engine.backups.list_backups()
    assert all(f"backup written: {written.file}" in body for _, body in answers)
    assert len(engine.store.audit.recent(action="backup")) == 1
    # the positive control: the form rendered again is a new request, and writes a new backup
    await page.reload()
    await page.get_by_label("Label (optional: a-z, 0-9, -)").fill("again")
    await page.get_by_role("button", name="Create backup").click()
    await page.wait_for_selector("h1.ok")
    assert len(engine.backups.list_backups()) == 2
    assert len(engine.store.audit.recent(action="backup")) == 2
    await page.context.close()


async def test_an_account_change_chosen_from_a_stale_page_writes_nothing(
    browser: Browser,
    live: str,  # noqa: F811
    web: Dashboard,
) -> None:
    accounts = web.logins.accounts
    page = await signed_in(browser, live, "admin")
    await menu(page, "Accounts")
    row = page.locator("#account-editor")
    await row.get_by_text("Change editor").click()
    # another admin changes the account while this page shows it as an enabled editor
    accounts.set_role("editor", "viewer", actor="web:ana")
    await row.get_by_role("button", name="Disable editor").click()
    alert = page.get_by_role("alert")
    await alert.wait_for()
    said = " ".join((await alert.inner_text()).split())
    assert "account 'editor' was changed since you saw it, by web:ana" in said
    assert "(it is now viewer, enabled); nothing was written" in said
    now = accounts.get("editor")
    assert now is not None
    assert (now.role, now.disabled) == ("viewer", False)
    assert web.engine.store.audit.recent(action="account_disable") == []
    # the positive control: the page as it is now, the same change applies
    await page.goto(f"{live}/accounts")
    await row.get_by_text("Change editor").click()
    await row.get_by_role("button", name="Disable editor").click()
    await page.wait_for_selector("h1.ok")
    disabled = accounts.get("editor")
    assert disabled is not None
    assert disabled.disabled
    await page.context.close()
