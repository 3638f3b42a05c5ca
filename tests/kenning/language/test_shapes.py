"""Value shapes and their normal forms (kenning/language/shapes.py), and what a statement's words
say (kenning/language/words.py). Pure."""

from __future__ import annotations

import pytest

from kenning.language import shapes, values, words


@pytest.mark.parametrize(
    ("text", "kind", "normal"),
    [
        ("limit is 100 requests per minute", "quantity", "100 request/minute"),
        ("timeout 30s", "quantity", "30 time"),
        ("timeout 5 minutes", "quantity", "300 time"),
        ("heap 2 GB", "quantity", "2048 size"),
        ("heap 2048 MB", "quantity", "2048 size"),
        ("require two approvals", "quantity", "2 approval"),
        ("runs at 3pm", "time", "15:00"),
        ("support 9:00-17:00", "time", "09:00-17:00"),
        ("due 15 March", "date", "03-15"),
        ("released every two weeks", "schedule", "every 2 week"),
        ("vacuum runs every Sunday", "schedule", "sunday"),
        ("the cron runs hourly", "schedule", "every 1 hour"),
        ("served at https://docs.acme.dev/", "url", "https://docs.acme.dev"),
        ("relay mail2.corp.internal", "host", "mail2.corp.internal"),
        ("dev server localhost:5173", "address", "localhost:5173"),
        ("logs in /srv/logs/shop/", "path", "/srv/logs/shop"),
        ("django 5.0.3", "version", "5.0.3"),
        ("owner: @tomasz", "owner", "tomasz"),
        ("alerts to #alerts-prod", "channel", "#alerts-prod"),
    ],
)
def test_each_shape_is_found_and_normalised(text: str, kind: str, normal: str) -> None:
    (fact,) = [f for f in values.facts(text) if f.slot == kind]
    assert fact.value == normal
    # positive control: the kind is one of the table's
    assert kind in {k for k, _ in shapes.KINDS}


def test_an_owner_needs_a_capital_name_and_a_label_is_no_value() -> None:
    assert [f.slot for f in values.facts("The service is owned by team 3")] == ["number"]
    assert [f.value for f in values.facts("The service is owned by Omar Haddad")] == ["omar haddad"]
    assert values.facts("Fact number 2 about the build cache") == ()
    assert [f.value for f in values.facts("Fact about the build cache: 2 layers")] == ["2 layer"]


@pytest.mark.parametrize(
    "text",
    [
        "does redis still run on 6379?",
        "Proposal: raise the API rate limit to 120 requests per minute.",
        "we might move to Linear",
        "TODO: upgrade the cluster to 1.30",
        "If we enable SSO, login sessions could last 24 hours",
        "we are planning to move uploads to /mnt/objects",
    ],
)
def test_questions_and_plans_assert_nothing(text: str) -> None:
    assert words.sentences(text) == []
    assert values.facts(text) == ()


def test_a_noun_called_planning_is_not_a_plan() -> None:
    assert words.sentences("we moved sprint planning to wednesdays") != []
    assert words.lemma("deploys") == "deploy"
    assert words.lemma("m5.large") == "m5.large"  # an identifier is its own lemma
