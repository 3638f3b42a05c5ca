"""Metric functions on small hand-made data."""

from __future__ import annotations

import math

import pytest

from bench import metrics


def test_first_rank_is_one_based_and_none_when_absent() -> None:
    assert metrics.first_rank(["x", "a", "b"], ["b", "a"]) == 2
    assert metrics.first_rank(["x", "y"], ["a"]) is None
    assert metrics.first_rank([], ["a"]) is None


def test_recall_at_k_and_mrr() -> None:
    ranks = [1, 3, None, 6]
    assert metrics.recall_at(ranks, 1) == 0.25
    assert metrics.recall_at(ranks, 5) == 0.5
    assert metrics.recall_at(ranks, 10) == 0.75
    assert metrics.mrr(ranks) == pytest.approx((1 + 1 / 3 + 1 / 6) / 4)
    assert math.isnan(metrics.recall_at([], 5))


def test_leak_rate_counts_queries_with_any_forbidden_result() -> None:
    returned = [["a", "b"], ["c"], []]
    forbidden = [["b"], ["z"], ["a"]]
    assert metrics.leak_rate(returned, forbidden) == pytest.approx(1 / 3)


def test_dedup_precision_and_recall() -> None:
    refused = [True, True, False, False, True]
    is_dup = [True, False, True, False, True]
    precision, recall = metrics.precision_recall(refused, is_dup)
    assert precision == pytest.approx(2 / 3)
    assert recall == pytest.approx(2 / 3)


def test_abstention_counts_empty_results() -> None:
    assert metrics.abstention([0, 2, 0, 1]) == 0.5


def test_percentiles_interpolate_between_ranks() -> None:
    samples = [float(x) for x in range(1, 101)]
    assert metrics.percentile(samples, 50) == pytest.approx(50.5)
    assert metrics.percentile(samples, 99) == pytest.approx(99.01)
    assert metrics.percentile([4.0], 95) == 4.0
    summary = metrics.latency_summary([0.001, 0.002, 0.003])
    assert summary["p50_ms"] == pytest.approx(2.0)
    assert summary["n"] == 3.0
