"""Server-rendered SVG charts as plain geometry (no I/O, no script): a
template draws the rectangles.

A chart is data first, so the JSON view of a page carries the same numbers the picture shows.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

WIDTH = 640
BAR_HEIGHT = 22
GAP = 8
LABEL = 120  # room for the row label on the left
COLOURS = {"active": "#2f6f4f", "deprioritised": "#c08a1e", "archived": "#8a8a8a"}


@dataclass(frozen=True)
class Segment:
    x: float
    width: float
    name: str
    value: int
    colour: str


@dataclass(frozen=True)
class Row:
    label: str
    y: float
    total: int
    segments: tuple[Segment, ...]


def stacked(
    series: dict[str, dict[str, int]], colours: dict[str, str] | None = None
) -> dict[str, Any]:
    """Horizontal stacked bars: one row per outer key, one segment per inner key,
    scaled to the largest row."""
    palette = colours or COLOURS
    largest = max((sum(parts.values()) for parts in series.values()), default=0) or 1
    scale = (WIDTH - LABEL - 60) / largest
    rows = []
    for i, (label, parts) in enumerate(series.items()):
        x, segments = float(LABEL), []
        for name, value in parts.items():
            if value > 0:
                segments.append(
                    Segment(x, round(value * scale, 2), name, value, palette.get(name, "#4a6fa5"))
                )
                x += round(value * scale, 2)
        rows.append(Row(label, i * (BAR_HEIGHT + GAP), sum(parts.values()), tuple(segments)))
    return {
        "width": WIDTH,
        "height": max(1, len(rows)) * (BAR_HEIGHT + GAP),
        "bar_height": BAR_HEIGHT,
        "label_width": LABEL,
        "rows": [asdict(r) for r in rows],
        "legend": [{"name": n, "colour": c} for n, c in palette.items()],
    }


# --- columns: one column per day (or bucket), series stacked or side by side ----------------------
COLUMN_WIDTH = 640
PLOT_HEIGHT = 180
LEFT = 44  # room for the y axis numbers
TOP = 10
BOTTOM = 64  # room for the x labels, the x axis title and the legend
MAX_X_LABELS = 8
SERIES_COLOURS = ("#1f5f8b", "#c08a1e", "#2f6f4f", "#8a3b8f", "#8a8a8a", "#a61b1b")


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    colour: str
    name: str
    label: str
    value: int


def nice_top(largest: int, ticks: int = 4) -> int:
    """The smallest 1/2/5 x 10^k step times ``ticks`` that is at least
    ``largest`` (at least ``ticks``)."""
    need = max(1, -(-largest // ticks))
    step = 1
    while True:
        for factor in (1, 2, 5):
            if step * factor >= need:
                return step * factor * ticks
        step *= 10


def _ticks(labels: list[str], slot: float, short: int) -> list[dict[str, Any]]:
    """The x labels drawn: at most ``MAX_X_LABELS``, the latest always."""
    every = max(1, -(-len(labels) // MAX_X_LABELS))
    return [
        {"x": round(LEFT + (i + 0.5) * slot, 2), "text": label[-short:] if short else label}
        for i, label in enumerate(labels)
        if (len(labels) - 1 - i) % every == 0
    ]


def _y_ticks(top: int, scale: float) -> list[dict[str, Any]]:
    return [
        {"y": round(TOP + PLOT_HEIGHT - v * scale, 2), "value": v}
        for v in range(0, top + 1, top // 4)
    ]


def columns(
    labels: list[str],
    series: dict[str, list[int]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    stacked: bool = True,
    short: int = 0,
) -> dict[str, Any]:
    """Vertical bars: one slot per label, each series a segment (``stacked``) or a bar of its own.

    ``short`` keeps the last ``short`` characters of an x label under the axis (a date's MM-DD); the
    table keeps the whole label. The numbers in ``table`` are exactly the ones drawn.
    """
    names = list(series)
    colours = {n: SERIES_COLOURS[i % len(SERIES_COLOURS)] for i, n in enumerate(names)}
    totals = [sum(series[n][i] for n in names) for i in range(len(labels))]
    largest = max(totals if stacked else [v for n in names for v in series[n]], default=0)
    top = nice_top(largest)
    scale = PLOT_HEIGHT / top
    slot = (COLUMN_WIDTH - LEFT - 8) / max(1, len(labels))
    bars = [
        bar
        for i, label in enumerate(labels)
        for bar in _slot(
            LEFT + i * slot, slot, label, {n: series[n][i] for n in names}, colours, scale, stacked
        )
    ]
    x_ticks, y_ticks = _ticks(labels, slot, short), _y_ticks(top, scale)
    return {
        "title": title,
        "x_label": x_label,
        "y_label": y_label,
        "width": COLUMN_WIDTH,
        "height": TOP + PLOT_HEIGHT + BOTTOM,
        "left": LEFT,
        "top": TOP,
        "plot_height": PLOT_HEIGHT,
        "baseline": TOP + PLOT_HEIGHT,
        "bars": [asdict(b) for b in bars],
        "x_ticks": x_ticks,
        "y_ticks": y_ticks,
        "legend": [
            {"name": n, "colour": colours[n], "x": LEFT + i * 130} for i, n in enumerate(names)
        ],
        "desc": _describe(title, labels, series),
        "table": _table(x_label, labels, series),
    }


def _table(x_label: str, labels: list[str], series: dict[str, list[int]]) -> dict[str, Any]:
    """The numbers drawn, as the table beside the chart."""
    names = list(series)
    return {
        "headers": [x_label, *names],
        "rows": [[label, *(series[n][i] for n in names)] for i, label in enumerate(labels)],
    }


def _slot(
    x: float,
    slot: float,
    label: str,
    values: dict[str, int],
    colours: dict[str, str],
    scale: float,
    stacked: bool,
) -> list[Bar]:
    inner = slot * 0.7
    start = x + (slot - inner) / 2
    base = float(TOP + PLOT_HEIGHT)
    bars: list[Bar] = []
    width = inner if stacked else inner / max(1, len(values))
    for i, (name, value) in enumerate(values.items()):
        if value <= 0:
            continue
        height = round(value * scale, 2)
        left = start if stacked else start + i * width
        bars.append(
            Bar(
                round(left, 2),
                round(base - height, 2),
                round(width, 2),
                height,
                colours[name],
                name,
                label,
                value,
            )
        )
        if stacked:
            base -= height
    return bars


def _describe(title: str, labels: list[str], series: dict[str, list[int]]) -> str:
    if not labels:
        return f"{title}: no data."
    parts = ", ".join(f"{name} {sum(values)}" for name, values in series.items())
    return f"{title}, {labels[0]} to {labels[-1]}: in all {parts}."
