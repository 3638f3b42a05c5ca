"""SKILL.md as plain data: clustering, the reinforcement gate, byte-stable
rendering, parsing, diffs and risk."""

from __future__ import annotations

import numpy as np
import pytest

from kenning.core.errors import InvalidInput
from kenning.knowledge import skill_doc
from kenning.knowledge.skill_doc import Lesson, Rule

A, B, C, D = ("episodic:01J9Z8Q4M5X7B2C3D4E5F6G7H" + c for c in "ABCD")
NORTH = np.array([1.0, 0.0, 0.0], dtype=np.float32)
NEAR_NORTH = np.array([0.95, 0.3, 0.0], dtype=np.float32)  # cosine 0.95 with NORTH
EAST = np.array([0.0, 1.0, 0.0], dtype=np.float32)  # cosine 0 with NORTH


def rules() -> list[Rule]:
    return [
        Rule("do", "Build indexes concurrently", (A, B)),
        Rule("watch", "No CONCURRENTLY in a transaction", (A,)),
        Rule("dont", "Don't use the pattern `pgbouncer transaction mode`.", (C, D)),
        Rule(
            "reference",
            "The manual on CREATE INDEX",
            ("knowledge:01J9Z8Q4M5X7B2C3D4E5F6G7HZ",),
            True,
        ),
    ]


def test_lessons_join_by_identity_or_near_vectors_from_distinct_memories() -> None:
    lessons = [
        Lesson("do", "Build indexes concurrently", A, NORTH),
        Lesson("do", "Use CONCURRENTLY for the index", B, NEAR_NORTH),
        Lesson("do", "Unrelated advice", C, EAST),
        Lesson("do", "build   indexes CONCURRENTLY", D, EAST),  # same words as A's: same rule
        Lesson("watch", "A gotcha of the same memory", A, NORTH),
    ]  # another section: never joined
    got = {(r.section, r.text): r.sources for r in skill_doc.cluster(lessons, 0.8)}
    assert got == {
        ("do", "Build indexes concurrently"): (A, B, D),
        ("do", "Unrelated advice"): (C,),
        ("watch", "A gotcha of the same memory"): (A,),
    }


def test_two_lessons_of_one_memory_are_not_evidence_for_each_other() -> None:
    lessons = [Lesson("watch", "first trap", A, NORTH), Lesson("watch", "second trap", A, NORTH)]
    assert [r.sources for r in skill_doc.cluster(lessons, 0.8)] == [(A,), (A,)]


def test_the_gate_needs_enough_sources_or_a_blessing() -> None:
    lessons = [
        Lesson("do", "twice", A, NORTH),
        Lesson("do", "twice", B, EAST),
        Lesson("do", "once", C, EAST),
        Lesson("do", "blessed once", D, NEAR_NORTH * -1),
    ]
    clustered = skill_doc.cluster(lessons, 0.8, blessed=frozenset({D}))
    kept, held = skill_doc.gate(clustered, 2)
    assert [r.text for r in kept] == ["twice", "blessed once"]
    assert [r.text for r in held] == ["once"]
    kept3, held3 = skill_doc.gate(clustered, 3)
    assert [r.text for r in kept3] == ["blessed once"]
    assert {r.text for r in held3} == {"twice", "once"}


def test_rendering_is_byte_stable_and_only_compiled_at_differs() -> None:
    first = skill_doc.render("postgres", rules(), "2026-09-21T00:00:00Z")
    again = skill_doc.render("postgres", list(reversed(rules())), "2026-09-21T00:00:00Z")
    later = skill_doc.render("postgres", rules(), "2026-10-01T12:00:00Z")
    assert first == again
    assert first != later
    assert [a for a, b in zip(first.splitlines(), later.splitlines(), strict=True) if a != b] == [
        "compiled_at: 2026-09-21T00:00:00Z"
    ]
    assert skill_doc.sha(first) == skill_doc.sha(later)
    assert first.startswith('---\nname: postgres\ndescription: "Reviewed lessons about postgres')
    assert f"## Do\n\n- Build indexes concurrently [{A}, {B}]\n" in first


def test_parse_reads_back_what_render_wrote() -> None:
    document = skill_doc.parse(skill_doc.render("postgres", rules(), "2026-09-21T00:00:00Z"))
    assert document.name == "postgres"
    assert [(r.section, r.text, r.sources) for r in document.rules] == [
        (r.section, r.text, r.sources) for r in skill_doc.ordered(rules())
    ]
    assert document.citations() == {A, B, C, D, "knowledge:01J9Z8Q4M5X7B2C3D4E5F6G7HZ"}


GOOD = skill_doc.render("postgres", rules(), "2026-09-21T00:00:00Z")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (GOOD.replace("---\n", "", 1), "no YAML front matter"),
        (GOOD.replace("\n---\n", "\n", 1), "not closed"),
        (
            GOOD.replace("name: postgres", "name: Postgres Tips"),
            "name 'Postgres Tips' is not allowed",
        ),
        (GOOD.replace("description: ", "summary: "), "needs a description"),
        (GOOD.replace(f" [{A}, {B}]", ""), "cites no source"),
        (GOOD.replace(f"[{A}, {B}]", "[episodic:not-a-ulid]"), "cites no source"),
        (GOOD.replace(A, A.replace("episodic", "secret")), "names no namespace"),
        (GOOD.replace("## Do", "## Maybe"), "unknown section"),
        (GOOD.replace("# postgres\n", f"# postgres\n\n- stray [{A}]\n"), "outside a section"),
        (GOOD + "\n" + "x" * skill_doc.MAX_BYTES, "the limit is"),
        ("---\n[unclosed\n---\n", "not valid YAML"),
        ("---\n- a list\n---\n", "must be a mapping"),
    ],
)
def test_malformed_skills_are_refused_with_the_reason(text: str, reason: str) -> None:
    assert skill_doc.parse(GOOD).name == "postgres"  # positive control
    with pytest.raises(InvalidInput, match=reason):
        skill_doc.parse(text)


def test_changes_are_labelled_by_risk_and_citations_alone_are_no_change() -> None:
    old = [
        Rule("do", "keep me", (A,)),
        Rule("do", "drop me", (A,)),
        Rule("watch", "old trap", (B,)),
    ]
    new = [Rule("do", "keep me", (A, B)), Rule("dont", "new ban", (C,)), Rule("do", "new do", (D,))]
    assert [(c.change, c.rule.text, c.risk) for c in skill_doc.changes(old, new)] == [
        ("added", "new ban", "high"),
        ("removed", "drop me", "high"),
        ("removed", "old trap", "medium"),
        ("added", "new do", "low"),
    ]


def test_diff_ignores_compiled_at() -> None:
    assert skill_doc.diff(GOOD, GOOD.replace("2026-09-21", "2027-01-01"), "postgres") == ""
    changed = skill_doc.diff(
        GOOD, GOOD.replace("Build indexes", "Always build indexes"), "postgres"
    )
    assert "-- Build indexes concurrently" in changed
    assert "+- Always build indexes concurrently" in changed


def test_one_line_and_citations_round_trip() -> None:
    assert skill_doc.one_line("a\n  b\tc") == "a b c"
    assert len(skill_doc.one_line("x" * 900)) == skill_doc.MAX_RULE
    key = "t1:mem:episodic:01J9Z8Q4M5X7B2C3D4E5F6G7HA"
    assert skill_doc.key_of(skill_doc.cite(key, "t1:"), "t1:") == key
