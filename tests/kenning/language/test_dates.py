"""Dates are bounded where they enter and always read back
(docs/reliability.md, issue 13 item 1)."""

from __future__ import annotations

import json
import uuid
from dataclasses import replace
from typing import Any

import pytest

from kenning.core.errors import InvalidInput
from kenning.core.models import INVALID_DATE, iso
from kenning.core.validation import EARLIEST, LATEST
from kenning.engine import Engine
from kenning.memory.listing import Listing
from kenning.memory.memories import Draft, Forgotten
from kenning.ops.backup_file import check
from kenning.store import AuditEvent

# a direct store write records itself too
SETUP = [AuditEvent(actor="test", action="test_setup", key="")]

POISON = (
    "0001-01-01T00:00:00+00:01",
    "9999-12-31T23:59:59-23:59",
    "0001-01-01",
    "9999-12-31",
    "-99999999999",
    "1e400",
    "nan",
)


@pytest.mark.parametrize("field", ["expires_at", "event_date", "valid_from"])
@pytest.mark.parametrize("value", POISON)
def test_a_date_outside_the_range_is_refused_with_a_hint(
    engine: Engine, field: str, value: str
) -> None:
    given: dict[str, Any] = {field: value}
    with pytest.raises(InvalidInput) as refused:
        engine.memories.remember(replace(Draft("release checklist is due"), **given), actor="t")
    assert "1900-01-01" in (refused.value.hint or "")
    listing = engine.memories.list(Listing(limit=5))
    assert listing.total == 0  # nothing half-written


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("1900-01-01T00:00:00Z", "1900-01-01T00:00:00Z"),
        ("8999-12-31T23:59:59Z", "8999-12-31T23:59:59Z"),
        (
            "1767225600",
            "2026-01-01T00:00:00Z",
        ),  # epoch seconds as the MCP tools pass them: a string
        (1767225600, "2026-01-01T00:00:00Z"),
        ("1767225600.5", "2026-01-01T00:00:00Z"),
    ],
)
def test_a_date_at_the_edge_of_the_range_is_accepted_and_reads_back(
    engine: Engine, value: str | int, expected: str
) -> None:
    stored = engine.memories.remember(
        Draft("release checklist is due", event_date=value), actor="t"
    )
    memory = engine.memories.get(stored.key)
    assert memory.public()["event_date"] == expected
    assert memory.event_date is not None
    assert EARLIEST <= memory.event_date < LATEST


def test_an_iso_basic_date_is_still_a_date_not_epoch_seconds(engine: Engine) -> None:
    stored = engine.memories.remember(Draft("the audit happened", event_date="20260314"), actor="t")
    assert engine.memories.get(stored.key).public()["event_date"] == "2026-03-14T00:00:00Z"


def test_iso_never_raises() -> None:
    assert iso(0.0) == "1970-01-01T00:00:00Z"
    assert iso(-62135596860.0) == f"{INVALID_DATE} (-62135596860.0)"
    assert iso(float("inf")) == f"{INVALID_DATE} (inf)"
    assert iso(1e30) == f"{INVALID_DATE} (1e+30)"


def _poisoned(engine: Engine, content: str) -> str:
    """A memory whose expires_at was written before dates were bounded (year 0 in UTC)."""
    key = engine.memories.remember(Draft(content, project="p"), actor="t").key
    assert engine.store.memories.update(key, {"expires_at": -62135596860.0}, SETUP)
    return key


def test_a_poisoned_row_never_stops_a_listing_a_maintenance_pass_or_a_forget(
    engine: Engine,
) -> None:
    healthy = engine.memories.remember(
        Draft("the deploy runs on Fridays", project="p"), actor="t"
    ).key
    bad = _poisoned(engine, "release checklist is due")
    page = engine.memories.list(Listing(projects=["p"], limit=10))
    shown = {m.key: m.public() for m in page.items}
    assert set(shown) == {healthy, bad}
    assert str(shown[bad]["expires_at"]).startswith(INVALID_DATE)
    report = engine.maintenance.run()
    assert report.expired.archived == [bad]  # a date long past: it expired, as any other would
    assert engine.memories.get(healthy).state == "active"
    assert engine.memories.forget(bad, confirm=True, actor="t") == Forgotten(bad)
    assert engine.memories.list(Listing(projects=["p"], limit=10)).total == 1


def test_a_poisoned_row_can_still_be_updated_retagged_and_explained(engine: Engine) -> None:
    bad = _poisoned(engine, "release checklist is due on Monday")
    engine.memories.retag(bad, add=["release"], actor="t")
    updated = engine.memories.update(bad, "release checklist is due on Tuesday", actor="t")
    assert updated.tags == ("release",)
    assert str(engine.inspection.explain(bad).public()["memory"]["expires_at"]).startswith(
        INVALID_DATE
    )


def test_a_backup_holding_a_poisoned_date_is_refused_before_writing(engine: Engine) -> None:
    engine.memories.remember(Draft("the deploy runs on Fridays"), actor="t")
    # the clock stands still
    made = engine.backups.backup(label=f"dates-{uuid.uuid4().hex[:8]}", actor="admin")
    data = json.loads(engine.backups.path_of(made.file).read_text(encoding="utf-8"))
    check(data)  # the positive control: the file as written is accepted
    data["memories"][0]["fields"]["expires_at"] = "-62135596860.0"
    with pytest.raises(InvalidInput, match=r"memory #0 .* expires_at is outside"):
        check(data)
