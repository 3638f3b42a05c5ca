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
