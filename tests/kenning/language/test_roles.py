"""Which near-identical sentences state different facts (kenning.language.roles)."""

from __future__ import annotations

import pytest

from kenning.language.roles import different_facts


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (
            "payments-gateway calls tax-engine over gRPC.",
            "tax-engine calls payments-gateway over gRPC.",
        ),
        ("geo-router depends on mail-relay.", "mail-relay depends on geo-router."),
        ("Marco found a memory leak in vault-proxy.", "Chen found a memory leak in vault-proxy."),
        (
            "The vault-proxy timeout is short on purpose.",
            "The vault-proxy timeout is long on purpose.",
        ),
        ("vault-proxy runs in the EU region.", "vault-proxy runs in the US region."),
        ("Nate: Bye Joanna!", "Joanna: Bye Nate!"),
    ],
)
def test_role_order_actors_and_values_make_different_facts(a: str, b: str) -> None:
    assert different_facts(a, b)
    assert different_facts(b, a)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("We deploy with Fly.", "Note: We deploy with Fly."),
        ("We deploy with Fly.", "We deploy with Fly (confirmed again)."),
        ("Use `ruff` for linting. Run it in CI.", "use ruff for linting; run it in CI."),
        ("We deploy with Fly.", "We deployed with Fly."),
        (
            "payments-gateway calls tax-engine over gRPC.",
            "payments-gateway calls tax-engine over gRPC.",
        ),
    ],
)
def test_rewordings_are_the_same_fact(a: str, b: str) -> None:
    assert not different_facts(a, b)
