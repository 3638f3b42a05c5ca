"""The exact look-up's bench (bench/unreachable.py) once, small: the check leaves memories
unreachable at EF_RUNTIME 10, the store's KNN finds every listed one with the list and none with
it emptied, and each mode's latencies are measured."""

from __future__ import annotations

from bench import unreachable


def test_the_listed_are_found_with_the_list_and_missed_without() -> None:
    got = unreachable.run(size=5_000, ef=10, n_queries=5, rounds=1, most=2)
    assert got["check"]["still_missed"] > 2  # the positive control: the graph misses some
    assert got["listed"] == 2
    assert got["modes"]["listed"]["found"] == [2]
    assert got["modes"]["emptied"]["found"] == [0]
    for mode in got["modes"].values():
        assert mode["ms"]["p50"] > 0
        assert mode["filtered_ms"]["p50"] > 0
    assert "| listed | 2-2 of 2 |" in unreachable.table(got)
