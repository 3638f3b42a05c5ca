"""Server-rendered SVG charts as plain geometry (no I/O, no script): a template draws the rectangles.

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


def stacked(series: dict[str, dict[str, int]], colours: dict[str, str] | None = None) -> dict[str, Any]:
    """Horizontal stacked bars: one row per outer key, one segment per inner key, scaled to the largest row."""
    palette = colours or COLOURS
    largest = max((sum(parts.values()) for parts in series.values()), default=0) or 1
    scale = (WIDTH - LABEL - 60) / largest
    rows = []
    for i, (label, parts) in enumerate(series.items()):
        x, segments = float(LABEL), []
        for name, value in parts.items():
            if value > 0:
                segments.append(Segment(x, round(value * scale, 2), name, value, palette.get(name, "#4a6fa5")))
                x += round(value * scale, 2)
        rows.append(Row(label, i * (BAR_HEIGHT + GAP), sum(parts.values()), tuple(segments)))
    return {"width": WIDTH, "height": max(1, len(rows)) * (BAR_HEIGHT + GAP), "bar_height": BAR_HEIGHT,
            "label_width": LABEL, "rows": [asdict(r) for r in rows],
            "legend": [{"name": n, "colour": c} for n, c in palette.items()]}
