"""The substance prior (kenning/language/substance.py): small talk and bare questions do
not crowd out statements."""

from __future__ import annotations

import pytest

from kenning.language import substance


@pytest.mark.parametrize(
    ("text", "prior"),
    [
        ("Hi!", 0.8),
        ("Thanks, see you!", 0.8),
        ("Sounds good", 0.8),
        ("Nate: Bye Joanna!", 0.9),
        ("Joanna: We picked Valkey because it is open source.", 1.0),
        ("We deploy with Fly", 1.0),
        ("Use pickle for caching", 1.0),
        ("Nate: What made you pick Valkey?", 0.6),
        ("Why? We use Valkey because it is fast.", 1.0),  # a question followed by its answer states
    ],
)
def test_prior(text: str, prior: float) -> None:
    assert substance.substance(text) == pytest.approx(prior)


def test_a_speaker_prefix_is_not_content() -> None:
    assert substance.content_words("Joanna: hi!") == 0
    assert substance.content_words("hi Joanna") == 1


@pytest.mark.parametrize(
    "text",
    [
        "ok",
        "Thanks! See you",
        "Sam: the cache",
        "We moved the nightly export to 03:00 UTC: the billing job held the lock until then.",
        "hi hi hi hi hi hi hi hi hi hi hi Valkey",
        "Is it done? Yes. Why? Because the lock moved.",
        "Who owns the deploy key? And when does it rotate?",
    ],
)
def test_the_prior_reads_only_the_first_words_it_needs_and_agrees_with_the_count(
    text: str,
) -> None:
    words = substance.content_words(text)
    expected = max(substance.FLOOR, 1.0 - substance.STEP * max(0, substance.FULL_WORDS - words))
    question = substance.QUESTION if substance.asks_only(text) else 1.0
    assert substance.substance(text) == pytest.approx(expected * question)


def test_a_text_without_a_question_mark_never_asks_only() -> None:
    assert not substance.asks_only("Deploys run on Tuesday. The key rotates monthly.")
    assert not substance.asks_only("no punctuation at all")
    assert substance.asks_only("Who rotates the key? When?")  # positive control
