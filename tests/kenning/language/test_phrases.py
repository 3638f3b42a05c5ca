"""Whole-word / phrase matching: plain data in, plain data out."""

from __future__ import annotations

import pytest

from kenning.core.errors import InvalidInput
from kenning.language import phrases


@pytest.mark.parametrize(
    ("text", "phrase", "expected"),
    [
        ("we rewrote it in Go last year", "go", True),
        ("search it on google", "go", False),
        ("that was ages ago", "go", False),
        ("the go-redis client", "go", True),
        ("Use React Query for caching", "react query", True),
        ("react-query v5", "React-Query", True),
        ("querying react state", "react query", False),
        ("node.js 20 is fine", "node.js", True),
        ("ported from C++ to Rust", "c++", True),
        ("ported from C to Rust", "c++", False),
        ("C# services", "c", False),
        ("ÉCOLE normale", "école", True),
    ],
)
def test_contains_is_whole_words(text: str, phrase: str, expected: bool) -> None:
    assert phrases.contains(text, phrase) is expected


def test_normalise_folds_case_and_punctuation() -> None:
    assert phrases.normalise("  Redis-Cluster ") == "redis cluster"
    assert phrases.normalise("node.JS") == "node js"
    assert phrases.normalise("?!") == ""


def test_ngrams_cover_every_run_up_to_the_limit() -> None:
    grams = phrases.ngrams("try the redis cluster now", longest=2)
    assert {"try", "redis", "redis cluster", "cluster now"} <= grams
    assert "the redis cluster" not in grams


def test_found_in_returns_only_whole_word_matches_in_order() -> None:
    text = "Should we use Go or gorilla/mux for the google API?"
    assert phrases.found_in(text, ["gorilla mux", "go", "goo", "google api"]) == [
        "gorilla mux",
        "go",
        "google api",
    ]
    assert phrases.found_in(text, []) == []


def test_search_words_drop_stop_words_and_punctuation() -> None:
    assert phrases.search_words("the src/app.py") == ("src", "app", "py")
    assert phrases.search_words("ERR_SSL_PROTOCOL") == ("err_ssl_protocol",)
    assert phrases.search_words("the") == ()


def test_query_text_is_stripped_and_refuses_empty_or_long_text_naming_what_it_was() -> None:
    assert phrases.query_text("  where is it?  ") == "where is it?"
    with pytest.raises(InvalidInput, match="topic is empty") as empty:
        phrases.query_text(" \n ", what="topic")
    assert empty.value.hint == "give the topic as a few words or a question"
    with pytest.raises(InvalidInput, match="2,001 characters"):
        phrases.query_text("x" * 2_001)


def test_specifics_are_the_numbers_versions_and_codes() -> None:
    assert phrases.specifics("Pin numpy==1.23.3, not 1.26; see E11000 and psycopg2.") == frozenset(
        {"1.23.3", "1.26", "e11000", "psycopg2"}
    )
    assert phrases.specifics("at most 2 retries") != phrases.specifics("at most 4 retries")
    assert phrases.specifics("No numbers here at all") == frozenset()


def test_names_not_starting_a_sentence_are_specifics() -> None:
    assert phrases.specifics("We deploy with Kamal. Then Bob checks it.") == frozenset(
        {"name:kamal", "name:bob"}
    )
    # control: same text, same specifics
    assert phrases.specifics("Use Kamal") == phrases.specifics("Use Kamal")
    assert phrases.specifics("Priya owns billing, with Marco") != phrases.specifics(
        "Priya owns billing, with Aiko"
    )


def test_swapped_speakers_are_not_a_repeat_but_an_added_label_is() -> None:
    assert phrases.swapped_roles("Nate: Bye Joanna!", "Joanna: Bye Nate!")
    # control: the same turn
    assert not phrases.swapped_roles("Nate: Bye Joanna!", "Nate: Bye Joanna!")
    assert not phrases.swapped_roles("Deploy: merge to main", "Note: Deploy: merge to main")
    assert phrases.speaker("Nate: hi") == "nate"
    assert phrases.speaker("no speaker here") is None
