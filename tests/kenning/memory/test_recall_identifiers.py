"""Identifiers in recall (issue 33): a real identifier lifts the memories that hold it; a name
written with a hyphen (a service, "dairy-free") is searched but does not flatten its memories."""

from __future__ import annotations

import pytest

from kenning.core.clock import ManualClock
from kenning.engine import Engine
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest, is_code

DAY = 86_400.0


@pytest.mark.parametrize(
    ("word", "code"),
    [
        ("ERR-4312", True),
        ("PAY-1834", True),
        ("v2.14.3", True),
        ("src/billing/retry.py", True),
        ("ERR_SSL", True),
        ("useEffect", True),
        ("ENOENT", True),
        ("pip install", True),  # backticked text
        ("vault-proxy", False),
        ("dairy-free", False),
        ("react-query", False),
        ("CSV", False),
    ],
)
def test_real_identifiers_and_names(word: str, code: bool) -> None:
    assert is_code(word) is code


def test_a_service_name_does_not_let_recency_pick_among_its_memories(
    engine: Engine, clock: ManualClock
) -> None:
    clock.advance(-400 * DAY)
    state = engine.memories.remember(
        Draft("vault-proxy keeps its state in etcd.", project="p"), actor="t"
    ).key
    clock.advance(400 * DAY)  # the other memories of the service are fresh: recency favours them
    # similarity 0.79 for the answer, 0.67 and 0.61 for these: x0.9 recency, the answer still
    # leads (0.71); lifted toward 1 as before it lost to the fresh 0.67 (0.80 against 0.84)
    for text in ("We upgraded vault-proxy last week.", "vault-proxy deploys went smoothly."):
        engine.memories.remember(Draft(text, project="p"), actor="t")
    found = engine.recaller.recall(RecallRequest("Where does vault-proxy keep its state?"))
    assert found.hits[0].memory.key == state
    assert "relevance" not in found.hits[0].factors  # a name: no lexical lift
    # positive control: a real identifier still lifts the memory that holds it, also an old one
    clock.advance(-400 * DAY)
    code = engine.memories.remember(
        Draft("ERR-4312 means the signing key of the invoice API expired.", project="p"), actor="t"
    ).key
    clock.advance(400 * DAY)
    engine.memories.remember(
        Draft("The invoice API signing keys are rotated every ninety days.", project="p"), actor="t"
    )
    lifted = engine.recaller.recall(RecallRequest("what does ERR-4312 mean?"))
    assert lifted.hits[0].memory.key == code
    assert lifted.hits[0].factors["relevance"] > lifted.hits[0].similarity
