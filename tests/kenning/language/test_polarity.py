"""The pure polarity check: opposite polarity about the SAME objects, nothing else."""

from __future__ import annotations

import pytest

from kenning.language.polarity import clauses, conflict, stem


@pytest.mark.parametrize(
    ("a", "b", "shared"),
    [
        ("do not use pickle", "use pickle for caching", ("pickle",)),
        ("We deploy with Fly", "We no longer use Fly; we deploy with Kamal", ("fly",)),
        ("The API does not return JSON", "The API returns JSON", ("api", "json")),
        ("Don't use tabs", "Use tabs for indentation", ("tab",)),
        ("Use Kamal instead of Fly", "We deploy with Fly", ("fly",)),
        ("We stopped using Redux", "Shared state lives in Redux", ("redux",)),
        ("We deploy with Fly", "We moved from Fly to Kamal", ("fly",)),
        ("We use Redux for state", "We replaced Redux with Zustand", ("redux",)),
        ("CI runs on Jenkins", "CI switched from Jenkins to GitHub Actions", ("ci", "jenkins")),
    ],
)
def test_opposite_polarity_about_the_same_object_conflicts(
    a: str, b: str, shared: tuple[str, ...]
) -> None:
    found = conflict(a, b)
    assert found is not None
    assert found.shared == shared
    reverse = conflict(b, a)
    assert reverse is not None
    assert reverse.shared == shared


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("do not use pickle", "do not use eval"),  # agreeing negatives
        ("do not use pickle", "use eval"),  # opposite polarity, different object
        ("We deploy with Fly", "We deploy with Kamal"),  # no negation at all
        ("Never deploy on Fridays", "Never deploy without running the tests"),
        ("Use pickle for caching", "Use pickle for the session store"),
        ("We deploy with Kamal", "We moved from Fly to Kamal"),  # the new choice agrees
        ("State lives in Zustand", "We replaced Redux with Zustand"),
    ],
)
def test_no_conflict_without_opposite_polarity_on_the_same_object(a: str, b: str) -> None:
    assert conflict(a, b) is None
    assert conflict(b, a) is None


def test_clauses_split_on_semicolons_and_contrast_words() -> None:
    parts = clauses("We no longer use Fly; we deploy with Kamal rather than Render")
    assert [(c.negated, sorted(c.objects)) for c in parts] == [
        (True, ["fly"]),
        (False, ["kamal"]),
        (True, ["render"]),
    ]


def test_double_negation_is_positive() -> None:
    (only,) = clauses("Never deploy without the tests")
    assert only.negated is False
    assert only.objects == frozenset({"test"})


def test_stem_keeps_short_words_and_double_s() -> None:
    assert stem("returns") == "return"
    assert stem("caches") == "cache"
    assert stem("boxes") == "box"
    assert stem("class") == "class"
    assert stem("bus") == "bus"
