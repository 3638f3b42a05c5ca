"""A question's key terms and how many of them a memory holds (kenning.language.overlap)."""

from __future__ import annotations

from kenning.language.overlap import coverage, key_terms


def test_key_terms_leave_out_what_every_question_is_made_of() -> None:
    assert key_terms("Tell me: what do we know about the invoice export?") == {"invoice", "export"}
    assert key_terms("What did we decide") == {"decide"}
    assert key_terms("incidents") == {"incident"}
    assert key_terms("what happened?") == frozenset()
    assert key_terms("got HB-3007 from the API, what is it") == {"hb-3007", "api"}


def test_coverage_meets_lemmas_and_compound_parts() -> None:
    memory = "Proof-of-delivery photos are resized and stored as WebP; we decided it in May."
    assert coverage(key_terms("pod photo size"), memory) == 1 / 3
    assert coverage(key_terms("What did we decide"), memory) == 1.0
    assert coverage(key_terms("delivery photos format"), memory) == 2 / 3
    assert coverage(key_terms("proof-of-delivery"), memory) == 1.0
    # nothing in common: the question is near by meaning only
    assert coverage(key_terms("Who painted the Sistine Chapel ceiling?"), memory) == 0.0
    assert coverage(frozenset(), memory) == 1.0
