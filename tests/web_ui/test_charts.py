"""The SVG chart geometry is plain data (no I/O): rows scale to the largest, empty parts draw nothing."""

from __future__ import annotations

from web_ui import charts


def test_stacked_bars_scale_to_the_largest_row() -> None:
    chart = charts.stacked({"knowledge": {"active": 6, "deprioritised": 2, "archived": 0},
                            "episodic": {"active": 4, "deprioritised": 0, "archived": 0}})
    knowledge, episodic = chart["rows"]
    assert [s["name"] for s in knowledge["segments"]] == ["active", "deprioritised"]
    full = charts.WIDTH - charts.LABEL - 60
    assert sum(s["width"] for s in knowledge["segments"]) == full
    assert episodic["segments"][0]["width"] == full / 2
    assert knowledge["segments"][1]["x"] == charts.LABEL + knowledge["segments"][0]["width"]
    assert (knowledge["total"], episodic["total"]) == (8, 4)


def test_an_empty_store_draws_rows_without_bars() -> None:
    chart = charts.stacked({"knowledge": {"active": 0}})
    assert chart["rows"][0]["segments"] == ()
    assert chart["height"] > 0
