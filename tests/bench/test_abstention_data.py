"""The held-out abstention set (bench/data/abstention.jsonl) is what bench.abstention says it is."""

from __future__ import annotations

from collections import Counter

from bench.abstention import load, summary


def test_every_question_is_labelled_and_each_kind_split_in_halves() -> None:
    memories, questions = load()
    assert len(memories) == 56
    kinds = Counter(q.kind for q in questions)
    assert kinds == {"answerable": 88, "near_miss": 30, "never_said": 20, "off_topic": 15}
    for kind, count in kinds.items():
        tuned = sum(1 for q in questions if q.kind == kind and q.split == "tune")
        assert tuned == (count + 1) // 2, kind
    for q in questions:
        assert (q.answer is not None) == (q.kind == "answerable"), q.text
        assert q.answer is None or q.answer in memories, q.text
        # a question never repeats its memory's words wholesale
        assert q.answer is None or q.text.lower() not in memories[q.answer].lower()
    assert len({q.text for q in questions}) == len(questions)


def test_the_summary_counts_each_side_apart() -> None:
    rows = [
        {"split": "tune", "kind": "answerable", "answerable": True, "abstained": False,
         "answered": True, "target_near": True},
        {"split": "tune", "kind": "off_topic", "answerable": False, "abstained": True,
         "answered": False, "target_near": False},
        {"split": "tune", "kind": "near_miss", "answerable": False, "abstained": False,
         "answered": False, "target_near": False},
    ]  # fmt: skip
    tune = summary(rows)["tune"]
    assert tune["unanswerable_abstained"] == 0.5
    assert (tune["off_topic_abstained"], tune["near_miss_abstained"]) == (1.0, 0.0)
    assert (tune["answerable_abstained"], tune["answerable_answered@5"]) == (0.0, 1.0)
