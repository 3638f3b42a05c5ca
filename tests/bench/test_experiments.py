"""The retrieval experiments score strategies on the same similarities; the
rules themselves are pure."""

from __future__ import annotations

import numpy as np

from bench import experiments as ex


def _scored(
    targets: tuple[str, ...], sims: list[float], bm25: list[float] | None = None
) -> ex.Scored:
    values = np.array(sims)
    return ex.Scored(
        targets=targets,
        uids=tuple(f"u{i}" for i in range(len(sims))),
        similarity=values,
        stripped=values,
        bm25=np.array(bm25 or [0.0] * len(sims)),
    )


def test_an_absolute_floor_finds_the_target_above_it_and_abstains_below() -> None:
    found = {
        "a": [_scored(("u1",), [0.1, 0.6, 0.3])],
        "b": [_scored(("u2",), [0.5, 0.4, 0.21])],
        "c": [_scored(("u0",), [0.9, 0.1, 0.1])],
        "g": [_scored((), [0.1, 0.2]), _scored((), [0.5, 0.1])],
    }
    got = ex.evaluate(found, ex.absolute(0.25))
    # b's target is under the floor; one g answered
    assert got == {"a": 1.0, "b": 0.0, "c": 1.0, "g": 0.5}
    # positive control: without the floor it is found
    assert ex.evaluate(found, ex.absolute(0.0))["b"] == 1.0


def test_the_hybrid_rule_lets_a_lexical_match_outrank_a_closer_vector() -> None:
    query = {
        "a": [_scored(("u1",), [0.40, 0.38, 0.1, 0.1, 0.1, 0.1], bm25=[0.0, 9.0, 0, 0, 0, 0])],
        "b": [],
        "c": [],
        "g": [],
    }
    ranking = ex.hybrid(0.2, 0.0)(query["a"][0])
    assert int(np.argmax(ranking)) == 1
    # positive control: vectors alone prefer u0
    assert int(np.argmax(ex.absolute(0.0)(query["a"][0]))) == 0


def test_words_and_scaffolding() -> None:
    assert ex.words("How do we deploy the services?") == ["deploy", "servic"]
    assert ex.stripped("Why did we pin numpy?") == "pin numpy"
    assert ex.stripped("deploy steps") == "deploy steps"
