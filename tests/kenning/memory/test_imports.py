"""Reading JSON Lines into drafts (kenning/memory/imports.py ``parse``): pure, plain data. The
import itself is tested through `kenning import` (tests/kenning_cli/test_import.py)."""

from __future__ import annotations

import pytest

from kenning.core.errors import InvalidInput
from kenning.core.models import RememberResult
from kenning.memory.imports import BOM, Defaults, outcomes, parse
from kenning.memory.memories import Draft


def test_lines_become_drafts_with_the_defaults_where_a_line_does_not_say() -> None:
    data = BOM + (
        b'{"content": "Deploy with fly.", "tags": ["deploy"]}\n'
        b"\n"  # blank lines are skipped, and counted
        b'{"content": "Prefer uv.", "namespace": "preference", "project": null, "event_date": '
        b'1790000000}\r\n{"content": "Reset on Mondays.", "project": "global", '
        b'"tags": ["ops", "legacy"]}\n'
    )
    lines, errors = parse(data, Defaults("project", "atlas-api", ("legacy",)), max_lines=10)
    assert errors == []
    assert [line.number for line in lines] == [1, 3, 4]
    assert [line.draft for line in lines] == [
        Draft(
            "Deploy with fly.", namespace="project", project="atlas-api", tags=("deploy", "legacy")
        ),
        Draft(
            "Prefer uv.",
            namespace="preference",
            project="atlas-api",
            tags=("legacy",),
            event_date=1790000000,
        ),
        Draft("Reset on Mondays.", namespace="project", project="global", tags=("ops", "legacy")),
    ]
    # what a retry file holds: the line with the defaults applied, so it
    # imports the same without options
    assert lines[0].fields == {
        "content": "Deploy with fly.",
        "tags": ["deploy", "legacy"],
        "namespace": "project",
        "project": "atlas-api",
    }


@pytest.mark.parametrize(
    ("line", "error"),
    [
        (
            b'{"content": "x",}',
            "not valid JSON: Expecting property name enclosed in double quotes (column 17)",
        ),
        (b'"just a string"', "a string, not a JSON object"),
        (b'{"content": "x", "kind": "skill"}', "unknown field(s) kind"),
        (b'{"content": "x", "tags": "a,b"}', "tags must be a list of strings, not a string"),
        (
            b'{"content": "x", "tags": ["a", 1]}',
            "tags must be a list of strings, not a list holding a number",
        ),
        (b'{"content": 42}', "content must be a string, not a number"),
        (
            b'{"content": "x", "event_date": true}',
            "event_date must be a date string or epoch seconds, not true/false",
        ),
        (b'{"content": "x", "event_date": NaN}', "NaN is not a JSON value"),
        (b'{"content": "x", "content": "y"}', "field content is given twice"),
        (b'{"content": "\\ud800"}', "content holds a lone surrogate escape"),
        (b'{"content": "caf\xe9"}', "not UTF-8 text (byte 17)"),
    ],
)
def test_a_bad_line_is_named_with_what_is_wrong(line: bytes, error: str) -> None:
    good = b'{"content": "Deploy with fly."}\n'
    lines, errors = parse(good + line + b"\n" + good, Defaults(), max_lines=10)
    assert [line.number for line in lines] == [1, 3]
    assert [e.number for e in errors] == [2]
    assert errors[0].message.startswith(error)


def test_limits_and_a_json_array_are_refused_whole() -> None:
    three = b'{"content": "a"}\n{"content": "b"}\n\n{"content": "c"}\n'
    assert len(parse(three, Defaults(), max_lines=3)[0]) == 3
    with pytest.raises(InvalidInput, match=r"more than 2 memories \(line 4\)"):
        parse(three, Defaults(), max_lines=2)
    with pytest.raises(InvalidInput, match="a JSON array, not JSON Lines"):
        parse(b' [{"content": "a"}]', Defaults(), max_lines=3)


def test_a_duplicate_of_an_earlier_line_names_that_line() -> None:
    data = b'{"content": "a"}\n{"content": "b"}\n{"content": "a"}\n{"content": "c"}\n'
    lines, _ = parse(data, Defaults(), max_lines=10)
    results = [
        RememberResult("stored", "k:1"),
        RememberResult("duplicate", "k:9", 0.97),
        RememberResult("duplicate", "k:1", 1.0),
        RememberResult("failed", ""),
    ]
    assert [o.public() for o in outcomes(lines, results)] == [
        {"line": 1, "status": "stored", "key": "k:1"},
        {"line": 2, "status": "duplicate", "key": "k:9", "similarity": 0.97},
        {"line": 3, "status": "duplicate", "key": "k:1", "similarity": 1.0, "duplicate_of_line": 1},
        {"line": 4, "status": "failed", "key": ""},
    ]
    planned = [
        RememberResult("new", "k:1"),
        RememberResult("new", "k:2"),
        RememberResult("duplicate", "k:1", 1.0),
        RememberResult("new", "k:3"),
    ]
    assert outcomes(lines, planned)[2].public() == {
        "line": 3,
        "status": "duplicate",
        "key": "",
        "similarity": 1.0,
        "duplicate_of_line": 1,
    }
