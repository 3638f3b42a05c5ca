"""Value changes (kenning/language/values.py): same subject and slot, another value. Pure."""

from __future__ import annotations

import pytest

from kenning.language import values

CHANGES = [
    (
        "Local Postgres runs on port 5433 (not 5432)",
        "Postgres now runs on 5432; the 5433 workaround was removed",
        "port",
        "5433",
        "5432",
    ),
    (
        "The staging API listens on port 8080",
        "The staging API now listens on port 9090",
        "port",
        "8080",
        "9090",
    ),
    ("We pin numpy to 1.23.3", "We pin numpy to 1.26.1", "version", "1.23.3", "1.26.1"),
    (
        "The api service runs Python 3.11",
        "The api service moved from Python 3.11 to 3.12",
        "version",
        "3.11",
        "3.12",
    ),
    (
        "Backups are stored in /var/backups/kenning",
        "Backups are now stored in /srv/backups/kenning",
        "path",
        "/var/backups/kenning",
        "/srv/backups/kenning",
    ),
    (
        "The metrics DB host is db1.internal",
        "The metrics DB host is db2.internal",
        "host",
        "db1.internal",
        "db2.internal",
    ),
    (
        "Run the tests with `make test`",
        "Run the tests with `pytest -q`",
        "command",
        "make test",
        "pytest -q",
    ),
    (
        "The billing service is owned by Priya",
        "The billing service is now owned by Marco",
        "owner",
        "priya",
        "marco",
    ),
    (
        "The nightly backup runs at 02:00",
        "The nightly backup now runs at 03:30",
        "schedule",
        "02:00",
        "03:30",
    ),
    (
        "The release train leaves every Tuesday",
        "The release train leaves every Thursday",
        "schedule",
        "tuesday",
        "thursday",
    ),
]


@pytest.mark.parametrize(("older", "newer", "slot", "old", "new"), CHANGES)
def test_a_new_value_for_the_same_subject_is_a_change(
    older: str, newer: str, slot: str, old: str, new: str
) -> None:
    found = values.change(older, newer)
    assert found is not None
    assert (found.slot, found.old, found.new) == (slot, old, new)
    assert found.evidence()["kind"] == "value_change"


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        (
            "Local Postgres runs on port 5433 (not 5432)",
            "Our local Postgres database still uses port 5433",
        ),
        ("We pin numpy to 1.23.3", "numpy stays pinned to 1.23.3"),
        ("The billing service is owned by Priya", "Priya owns the billing service"),
    ],
)
def test_the_same_value_agrees(older: str, newer: str) -> None:
    assert values.facts(older)
    assert values.facts(newer)
    assert values.change(older, newer) is None


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("The staging API listens on port 8080", "The staging worker listens on port 9090"),
        ("Redis runs on port 6379", "Postgres runs on port 5432"),
        ("We pin numpy to 1.23.3", "We pin pandas to 2.1.0"),
        ("The billing service is owned by Priya", "The search service is owned by Marco"),
    ],
)
def test_different_subjects_with_different_values_are_not_a_change(older: str, newer: str) -> None:
    assert values.facts(older)
    assert values.facts(newer)
    assert values.change(older, newer) is None


def test_no_slot_no_change() -> None:
    assert values.facts("Nate: Bye Joanna!") == ()
    # polarity's business
    assert values.change("We deploy with Fly", "We deploy with Kamal") is None
