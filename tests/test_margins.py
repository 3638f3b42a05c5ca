"""The margin helper fails loudly, with the numbers, when a case drifts towards a threshold."""

from __future__ import annotations

import pytest

from tests.margins import assert_clear


def test_a_value_clear_of_both_edges_passes() -> None:
    assert_clear(0.31, above=0.2, below=0.4)
    assert_clear(0.76, above=0.55)


@pytest.mark.parametrize(
    ("value", "wanted"), [(0.3224, r"needs <= 0\.2700"), (0.27, r"needs >= 0\.3000")]
)
def test_a_value_near_an_edge_fails_with_its_numbers(value: float, wanted: str) -> None:
    with pytest.raises(AssertionError, match=wanted) as failure:
        assert_clear(value, above=0.25, below=0.32)
    assert f"is {value:.4f}" in str(failure.value)
