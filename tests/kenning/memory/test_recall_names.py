"""The proper names a recall checks against the store, and what a period-only question asks of
its period (kenning.memory.recall_plan)."""

from __future__ import annotations

from kenning.memory.recall_plan import RecallRequest, identifiers, plan, proper_names, says_asked

NOW = 1_767_225_600.0  # 2026-01-01


def names(text: str) -> tuple[str, ...]:
    return proper_names(text, identifiers(text))


def test_proper_names_are_capitalised_words_inside_a_sentence() -> None:
    assert names("What is our Terraform state locking table called?") == ("Terraform",)
    assert names("What's Dmitri's preferred branch naming scheme?") == ("Dmitri",)
    assert names("Who painted the Sistine Chapel ceiling?") == ("Sistine", "Chapel")
    # a sentence's first word, identifiers, capitals and "I" are not names
    assert names("Dates look shifted. Why is that? Where do I look") == ()
    assert names("How does NordCargo reach the SFTP server with ERR-4312?") == ()
    assert names("what port does `Vault Proxy` use") == ()
    # months and days are dates, not names (positive control beside them: Berlin)
    assert names("What did we decide on June 26, 2023 in Berlin?") == ("Berlin",)
    assert names("Which cities do we deliver to on Sundays, and on Sept 3?") == ()


def test_a_period_only_question_carries_what_it_asks() -> None:
    asked = plan(RecallRequest("What did we decide in March 2025?"), NOW)
    assert asked.period_only
    assert asked.asked == {"decide"}
    assert says_asked(asked, "Leila: For billing we decided to cap retries at three.")
    assert not says_asked(asked, "Leila: We shipped search 4.2.0 to production.")
    # positive control: a question with a topic beside its date asks nothing of the window alone
    topical = plan(RecallRequest("what did we decide for billing retries in March 2025?"), NOW)
    assert not topical.period_only
    assert topical.asked == frozenset()
    assert not says_asked(topical, "Leila: For billing we decided to cap retries at three.")
