"""docs/benchmarks.md is regenerated from the results (``python -m bench.report``, and every
``kenning bench`` run): its hand-written findings must live in bench/FINDINGS.md, or the next
regeneration drops them (four sections were lost that way once)."""

from __future__ import annotations

from bench.page import FINDINGS
from bench.report import PAGE

HEADING = "## Findings (hand-written"


def findings_of_page() -> str:
    text = PAGE.read_text(encoding="utf-8")
    start = text.index(HEADING)
    return text[start:].rstrip()


def test_the_page_findings_are_exactly_bench_findings_md() -> None:
    kept = FINDINGS.read_text(encoding="utf-8").rstrip()
    assert kept.startswith(HEADING)
    assert findings_of_page() == kept, (
        "docs/benchmarks.md's findings differ from bench/FINDINGS.md: write findings in "
        "bench/FINDINGS.md and run `python -m bench.report` to regenerate the page"
    )
