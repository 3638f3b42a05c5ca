"""Similarity margins: a test case near a threshold must sit well clear of it on every CPU.

int8 similarities move in the second or third decimal between CPUs (AVX2 vs AVX-512 VNNI kernels,
docs/benchmarks.md), and fp32 and int8 differ by about as much. A case that relies on which side of
a threshold two texts fall asserts it here first, so a case drifting towards an edge fails loudly
with its numbers instead of flipping the test's real assertion.
"""

from __future__ import annotations

import numpy as np

from kenning.runtime.embedding import Embedder

MARGIN = 0.05  # DESIGN §2.2: no case within 0.05 of a similarity threshold


def similarity(embedder: Embedder, a: str, b: str) -> float:
    """Cosine of two texts' vectors (they are unit length), as the store's KNN computes it."""
    return float(np.dot(embedder.embed(a), embedder.embed(b)))


def assert_clear(
    value: float,
    *,
    above: float | None = None,
    below: float | None = None,
    what: str = "similarity",
    margin: float = MARGIN,
) -> None:
    """``value`` is at least ``margin`` above ``above`` and at least ``margin`` below ``below``."""
    assert above is not None or below is not None, "name the threshold(s) the value must clear"
    problems = []
    if above is not None and value < above + margin:
        problems.append(f"needs >= {above + margin:.4f} (threshold {above} + margin {margin})")
    if below is not None and value > below - margin:
        problems.append(f"needs <= {below - margin:.4f} (threshold {below} - margin {margin})")
    assert not problems, f"{what} is {value:.4f}: " + "; ".join(problems) + ": rebuild the case"


def assert_pair(
    embedder: Embedder,
    a: str,
    b: str,
    *,
    above: float | None = None,
    below: float | None = None,
    margin: float = MARGIN,
) -> float:
    """The two texts' similarity clears the thresholds on this embedder; the similarity."""
    value = similarity(embedder, a, b)
    assert_clear(
        value,
        above=above,
        below=below,
        margin=margin,
        what=f"similarity of {a!r} and {b!r} on {embedder.model_name}",
    )
    return value
