"""Knowing when nothing is known (issue 33): the verdict on a recall's evidence, pure and through
the engine, with answerable questions beside the unanswerable ones."""

from __future__ import annotations

from kenning.engine import Engine
from kenning.memory.confidence import Evidence, Thresholds, judge
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest, RecallResult
from kenning.runtime.embedding import Embedder
from tests.margins import assert_pair

LEAD, UNMATCHED, WEAK, STRANGER, UNRELATED = 0.05, 0.7, 0.32, 0.45, 0.275
LIMITS = Thresholds(
    weak=WEAK, lead=LEAD, unmatched=UNMATCHED, stranger=STRANGER, unrelated=UNRELATED
)
FACTS = (
    "ERR-4312 means the signing key of the invoice API expired.",
    "vault-proxy is written in C#.",
    "tax-engine listens on port 5050.",
    "We decided to batch the billing webhooks every five minutes.",
)
AROUND = [0.5, 0.26, 0.26, 0.26, 0.26, 0.26, 0.26]  # the best row, then six others


def verdict(**evidence: object) -> tuple[bool, str]:
    asked = Evidence(**evidence)  # type: ignore[arg-type]
    found = judge(asked, LIMITS)
    return found.confident, found.reason


def test_the_verdict_reads_the_evidence() -> None:
    assert verdict(similarities=[]) == (False, "nothing")
    assert verdict(similarities=[0.5], neighbourhood=AROUND) == (
        True,
        "similar",
    )  # clear of the band
    assert verdict(similarities=[0.33], neighbourhood=[0.33] * 7) == (
        True,
        "similar",
    )  # flat, above
    assert verdict(similarities=[0.28], neighbourhood=AROUND) == (False, "weak")  # 0.02 ahead
    assert verdict(similarities=[0.31], neighbourhood=AROUND) == (True, "similar")  # 0.05 ahead
    assert verdict(similarities=[0.27]) == (True, "similar")  # no neighbourhood: the floor decides
    assert verdict(similarities=[0.2], window=True) == (True, "window")
    assert verdict(similarities=[0.2], hinted=True) == (True, "hint")
    assert verdict(similarities=[0.2], warned=True) == (True, "graveyard")
    assert verdict(similarities=[0.3], named=True, held=True) == (True, "identifier")
    # the query names a thing no hit holds: only a strong match is an answer
    assert verdict(similarities=[0.6], named=True) == (False, "identifier_missing")
    assert verdict(similarities=[0.8], named=True, neighbourhood=AROUND) == (True, "similar")
    found = judge(Evidence([0.6], neighbourhood=[0.6, 0.2, 0.2, 0.1, 0.1, 0.1], named=True), LIMITS)
    assert found.public() == {
        "confident": False,
        "reason": "identifier_missing",
        "best_similarity": 0.6,
        "needed": 0.7,
        "typical_similarity": 0.1,
    }


def test_a_name_no_memory_holds_asks_for_a_strong_match() -> None:
    assert verdict(similarities=[0.4], neighbourhood=AROUND, stranger=True) == (
        False,
        "name_missing",
    )
    assert verdict(similarities=[0.5], neighbourhood=AROUND, stranger=True) == (True, "similar")
    # positive control: the same hits without the stranger are an answer (clear of the band)
    assert verdict(similarities=[0.4], neighbourhood=AROUND) == (True, "similar")
    # a held identifier is a proof whatever else is missing
    assert verdict(similarities=[0.3], named=True, held=True, stranger=True) == (
        True,
        "identifier",
    )


def test_hits_sharing_no_word_with_the_query_ask_for_more_than_the_floor() -> None:
    assert verdict(similarities=[0.27], coverage=0.0) == (False, "no_overlap")
    # positive control: one shared key term and the floor decides again (no neighbourhood)
    assert verdict(similarities=[0.27], coverage=0.25) == (True, "similar")
    # above the bar, the band rule still reads the neighbourhood
    assert verdict(similarities=[0.3], coverage=0.0, neighbourhood=AROUND) == (False, "weak")
    assert verdict(similarities=[0.4], coverage=0.0, neighbourhood=AROUND) == (True, "similar")
    assert judge(Evidence([0.5], coverage=0.5), LIMITS).coverage == 0.5
    assert judge(Evidence([]), LIMITS).coverage is None


def _store(engine: Engine) -> None:
    for text in FACTS:
        assert engine.memories.remember(Draft(text, project="p"), actor="t").status == "stored"


def _recall(engine: Engine, text: str) -> RecallResult:
    return engine.recaller.recall(RecallRequest(text, projects=["p"]))


def test_a_question_about_a_code_never_stored_is_no_confident_answer(
    engine: Engine, embedder: Embedder
) -> None:
    _store(engine)
    asked = "what does ERR-4999 mean?"
    # its nearest memory is close by meaning, far under the strong match it would need
    assert_pair(embedder, asked, FACTS[0], above=0.25, below=UNMATCHED)
    unsure = _recall(engine, asked)
    assert unsure.hits == ()
    assert unsure.weak[0].memory.content == FACTS[0]  # the weak candidate, kept apart
    assert unsure.confidence is not None
    assert unsure.confidence.reason == "identifier_missing"
    shown = unsure.public()
    assert shown["results"] == []
    assert shown["weak_candidates"][0]["content"] == FACTS[0]
    assert shown["results_note"].startswith("no confident answer")
    # positive control: the same question about the stored code is answered, by its identifier
    sure = _recall(engine, "what does ERR-4312 mean?")
    assert sure.hits[0].memory.content == FACTS[0]
    assert sure.confidence is not None
    assert (sure.confidence.confident, sure.confidence.reason) == (True, "identifier")
    assert sure.weak == ()


def test_an_off_topic_question_is_no_confident_answer(engine: Engine, embedder: Embedder) -> None:
    _store(engine)
    asked = "What is our policy on parental leave?"
    for fact in FACTS:
        assert_pair(embedder, asked, fact, below=engine.ctx.settings.relevance_floor)
    unsure = _recall(engine, asked)
    assert unsure.hits == ()
    assert unsure.confidence is not None
    assert (unsure.confidence.confident, unsure.confidence.reason) == (False, "nothing")
    # positive control: an answerable question without an identifier is answered
    sure = _recall(engine, "How often do we batch the billing webhooks?")
    assert sure.hits[0].memory.content == FACTS[3]
    assert sure.confidence is not None
    assert (sure.confidence.confident, sure.confidence.reason) == (True, "similar")


def test_a_question_naming_something_never_mentioned_is_no_confident_answer(
    engine: Engine, embedder: Embedder
) -> None:
    _store(engine)
    asked = "Which port does the Terraform state server use?"
    # near the port fact by meaning (above the floor), far under the strong match it would need
    assert_pair(embedder, asked, FACTS[2], above=0.25, below=STRANGER)
    unsure = _recall(engine, asked)
    assert unsure.hits == ()
    assert unsure.confidence is not None
    assert unsure.confidence.reason == "name_missing"
    assert FACTS[2] in [w.memory.content for w in unsure.weak]
    assert "names something no memory mentions" in unsure.public()["results_note"]
    # positive control: a stored name in the same question is answered
    named = "The Terraform state server listens on port 7443."
    engine.memories.remember(Draft(named, project="p"), actor="t")
    sure = _recall(engine, asked)
    assert sure.hits[0].memory.content == named
    assert sure.confidence is not None
    assert sure.confidence.confident
