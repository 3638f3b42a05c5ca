"""Retrieval and latency metrics. Pure functions over plain data.

A rank is the 1-based position of the first expected memory in a result list,
or None when it is absent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def first_rank(returned: Sequence[str], targets: Sequence[str]) -> int | None:
    """1-based position of the first target in ``returned``; None when no target was returned."""
    wanted = set(targets)
    for position, uid in enumerate(returned, start=1):
        if uid in wanted:
            return position
    return None


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    """Share of queries whose expected memory is in the top ``k``."""
    if not ranks:
        return math.nan
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


def mrr(ranks: Sequence[int | None]) -> float:
    """Mean reciprocal rank (0 for a miss)."""
    if not ranks:
        return math.nan
    return sum(1.0 / r for r in ranks if r is not None) / len(ranks)


def leak_rate(returned_lists: Sequence[Sequence[str]], forbidden: Sequence[Sequence[str]]) -> float:
    """Share of queries that returned at least one memory they must never return."""
    if not returned_lists:
        return math.nan
    leaks = sum(
        1 for got, bad in zip(returned_lists, forbidden, strict=True) if set(got) & set(bad)
    )
    return leaks / len(returned_lists)


def precision_recall(refused: Sequence[bool], is_duplicate: Sequence[bool]) -> tuple[float, float]:
    """Dedup precision (refused writes that were duplicates) and recall
    (duplicates that were refused)."""
    pairs = list(zip(refused, is_duplicate, strict=True))
    true_pos = sum(1 for r, d in pairs if r and d)
    refused_n = sum(1 for r, _ in pairs if r)
    dup_n = sum(1 for _, d in pairs if d)
    precision = true_pos / refused_n if refused_n else math.nan
    recall = true_pos / dup_n if dup_n else math.nan
    return precision, recall


def abstention(result_counts: Sequence[int]) -> float:
    """Share of no-answer queries that returned nothing."""
    if not result_counts:
        return math.nan
    return sum(1 for c in result_counts if c == 0) / len(result_counts)


def percentile(samples: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) with linear interpolation between closest ranks."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = math.ceil(position)
    if low == high:
        return ordered[low]
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    """p50/p95/p99/mean in milliseconds and the sample count."""
    ms = [s * 1000.0 for s in seconds]
    return {
        "p50_ms": percentile(ms, 50),
        "p95_ms": percentile(ms, 95),
        "p99_ms": percentile(ms, 99),
        "mean_ms": sum(ms) / len(ms) if ms else math.nan,
        "n": float(len(ms)),
    }


def retrieval_summary(ranks: Sequence[int | None]) -> dict[str, float]:
    return {
        "recall@1": recall_at(ranks, 1),
        "recall@5": recall_at(ranks, 5),
        "recall@10": recall_at(ranks, 10),
        "mrr": mrr(ranks),
        "n": float(len(ranks)),
    }
