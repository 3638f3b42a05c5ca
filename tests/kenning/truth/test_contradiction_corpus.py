"""The pure contradiction check over the labelled corpus (bench/data/contradictions.jsonl) meets
the goal of issue 31 on every split: recall >= 0.85 at precision >= 0.95. No store, no model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kenning.truth.detection import conflict

CORPUS = Path(__file__).resolve().parents[3] / "bench" / "data" / "contradictions.jsonl"
ROWS = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line]


def test_the_corpus_is_balanced_varied_and_split() -> None:
    positives = [r for r in ROWS if r["label"]]
    negatives = [r for r in ROWS if not r["label"]]
    assert len(ROWS) >= 300
    assert abs(len(positives) - len(negatives)) <= 0.05 * len(ROWS)
    assert {r["style"] for r in ROWS} == {"terse", "slack", "formal", "nonnative", "typo"}
    assert {"additive", "two_subjects", "restated", "plan", "question", "project"} <= {
        r["kind"] for r in negatives
    }
    assert {r["split"] for r in ROWS} == {"dev", "holdout"}
    assert len({(r["older"], r["newer"]) for r in ROWS}) == len(ROWS)


@pytest.mark.parametrize("split", ["dev", "holdout", None])
def test_recall_and_precision_meet_the_goal(split: str | None) -> None:
    rows = [r for r in ROWS if split is None or r["split"] == split]
    found = [(r["label"], conflict(r["older"], r["newer"]) is not None) for r in rows]
    tp = sum(1 for label, hit in found if label and hit)
    fp = sum(1 for label, hit in found if hit and not label)
    positives = sum(1 for label, _ in found if label)
    assert positives >= 50  # positive control: the split has something to find
    assert tp / positives >= 0.85
    assert tp / (tp + fp) >= 0.95


def test_each_record_names_the_changed_span_and_why() -> None:
    found = conflict(
        "The API rate limit is 100 requests per minute",
        "The API rate limit is 1000 requests per minute (raised in March)",
    )
    assert found is not None
    evidence = found.evidence()
    assert (evidence["old_span"], evidence["new_span"]) == (
        "100 requests per minute",
        "1000 requests per minute",
    )
    assert "for the same subject" in str(evidence["why"])
    reversal = conflict(
        "shop-api deploys with Kamal to two Hetzner boxes",
        "shop-api does not deploy with Kamal any more; it deploys with Helm",
    )
    assert reversal is not None
    assert reversal.evidence()["cue"] == "any more"
