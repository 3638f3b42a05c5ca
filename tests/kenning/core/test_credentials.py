"""Credentials refused before they are stored (kenning/core/credentials.py): the corpus goals, the
held-out set, and what a finding and a refusal say (never the value). Pure."""

from __future__ import annotations

import json

import pytest

from bench.credentials import CORPUS, build, load, measure
from kenning.core import credentials
from kenning.core.errors import InvalidInput

HELD_OUT = CORPUS.with_name("credentials_heldout.jsonl")
AWS = "AKIAZ3MSJV4WPLQ2ZQ7X"


def test_the_corpus_file_is_the_generator_s_output() -> None:
    assert load() == build()  # regenerate with `python -m bench.credentials --write`


def test_the_corpus_goals_hold() -> None:
    result = measure(load())
    assert result["secrets"] >= 150
    assert result["notes"] >= 300
    assert result["caught"] >= 0.95, result["missed"]
    assert result["notes_refused"] <= 0.01, result["refused"]


def test_the_held_out_set_written_by_hand() -> None:
    rows = [json.loads(line) for line in HELD_OUT.read_text(encoding="utf-8").splitlines()]
    result = measure(rows)
    assert (result["secrets"], result["notes"]) == (20, 20)
    assert result["caught"] >= 0.95, result["missed"]
    assert result["refused"] == []


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        (f"the deploy user's key is {AWS}", "AWS Access Key"),
        ("psql postgres://app:Tr0ub4dor&3@db:5432/shop", "password in a URL"),
        ("claude key sk-ant-api03-" + "a1B2c3D4e5" * 6, "Anthropic API key"),
        ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", "Private Key"),
    ],
)
def test_a_finding_says_what_and_where(text: str, kind: str) -> None:
    found = credentials.find(text)
    assert [f.kind for f in found] == [kind]
    assert text[found[0].start : found[0].end] in text
    redacted = credentials.redact(text)
    assert f"[REDACTED: {kind}]" in redacted
    assert credentials.find(redacted) == []  # a redacted text passes


@pytest.mark.parametrize(
    "text",
    [
        "the AWS docs use AKIAIOSFODNN7EXAMPLE as the sample key",
        "set OPENAI_API_KEY=<your-key> before the first run",
        "DATABASE_URL=postgres://app:${DB_PASS}@localhost/app",
        "the password is stored in Vault, never in git",
        "reverted 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39 after the outage",
    ],
)
def test_examples_placeholders_and_prose_are_not_credentials(text: str) -> None:
    assert credentials.find(text) == []


def test_a_refusal_names_the_kind_and_the_place_never_the_value() -> None:
    text = f"ci uses {AWS} for the bucket"
    with pytest.raises(InvalidInput) as refused:
        credentials.guard(text, "refuse")
    message = f"{refused.value.message} {refused.value.hint}"
    assert "AWS Access Key" in message
    assert "characters 9-28" in message
    assert AWS not in message
    assert credentials.guard(text, "redact") == "ci uses [REDACTED: AWS Access Key] for the bucket"
    assert credentials.guard("ci uses the bucket's role", "refuse") == "ci uses the bucket's role"
