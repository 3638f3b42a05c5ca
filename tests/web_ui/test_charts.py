"""The SVG chart geometry is plain data (no I/O): rows scale to the largest, empty parts draw
nothing; the recall histogram is read from Prometheus text per bucket."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Histogram, generate_latest

from web_ui import charts, latency


def test_stacked_bars_scale_to_the_largest_row() -> None:
    chart = charts.stacked(
        {
            "knowledge": {"active": 6, "deprioritised": 2, "archived": 0},
            "episodic": {"active": 4, "deprioritised": 0, "archived": 0},
        }
    )
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


def test_nice_top_is_a_round_ceiling() -> None:
    assert [charts.nice_top(n) for n in (0, 1, 4, 5, 9, 17, 100)] == [4, 4, 4, 8, 20, 20, 200]


def test_columns_draw_the_numbers_they_are_given() -> None:
    labels = [f"2026-09-{d:02d}" for d in range(1, 15)]
    series = {"episodic": [d % 3 for d in range(14)], "knowledge": [d % 5 for d in range(14)]}
    chart = charts.columns(labels, series, title="Made", x_label="day", y_label="memories", short=5)
    assert chart["table"]["rows"][4] == ["2026-09-05", 1, 4]
    drawn = {(b["name"], b["label"]): b["value"] for b in chart["bars"]}
    assert drawn == {
        (n, labels[i]): v for n, values in series.items() for i, v in enumerate(values) if v
    }
    scale = charts.PLOT_HEIGHT / chart["y_ticks"][-1]["value"]
    day5 = [b for b in chart["bars"] if b["label"] == "2026-09-05"]
    assert [b["height"] for b in day5] == [round(1 * scale, 2), round(4 * scale, 2)]
    # stacked: knowledge sits on episodic
    assert abs(day5[1]["y"] + day5[1]["height"] - day5[0]["y"]) < 0.02
    assert len(chart["x_ticks"]) <= charts.MAX_X_LABELS + 1
    assert chart["x_ticks"][-1]["text"] == "09-14"
    assert "episodic 13" in chart["desc"]


def test_side_by_side_columns_share_their_slot() -> None:
    chart = charts.columns(
        ["a"],
        {"opened": [2], "resolved": [1]},
        title="C",
        x_label="day",
        y_label="n",
        stacked=False,
    )
    opened, resolved = chart["bars"]
    assert opened["x"] + opened["width"] == resolved["x"]
    assert opened["height"] == 2 * resolved["height"]


def test_the_recall_histogram_is_read_per_bucket() -> None:
    registry = CollectorRegistry()
    histogram = Histogram(
        "kenning_mcp_tool_latency_seconds",
        "MCP tool call latency.",
        ("tool",),
        buckets=(0.005, 0.01, 0.025),
        registry=registry,
    )
    for seconds in (0.001, 0.002, 0.007, 0.02, 3.0):
        histogram.labels("recall").observe(seconds)
    histogram.labels("remember").observe(0.001)
    read = latency.recall_histogram(generate_latest(registry).decode())
    assert [(b["label"], b["count"]) for b in read["buckets"]] == [
        ("≤5 ms", 2),
        ("≤10 ms", 1),
        ("≤25 ms", 1),
        ("slower", 1),
    ]
    assert read["count"] == 5
