"""The generated history of the timeline family (bench/history.py): deterministic,
with known answers. Pure."""

from __future__ import annotations

from bench.history import generate
from kenning.language import values


def test_the_same_seed_gives_the_same_history() -> None:
    first, again = generate(7), generate(7)
    assert [t.text for t in first.turns] == [t.text for t in again.turns]
    assert first.questions == again.questions
    assert [t.text for t in generate(8).turns] != [t.text for t in first.turns]


def test_every_question_has_one_target_in_the_history() -> None:
    history = generate(7)
    uids = {t.uid for t in history.turns}
    assert {q.kind for q in history.questions} == {"dated", "old_fact", "current", "answer"}
    assert all(q.target in uids for q in history.questions)
    # each turn at its own time
    assert [t.at for t in history.turns] == sorted(t.at for t in history.turns)


def test_each_change_is_a_value_change_of_its_slot() -> None:
    history = generate(7)
    text = {t.uid: t.text for t in history.turns}
    order = {t.uid: n for n, t in enumerate(history.turns)}
    assert history.changes  # control: the history has changes to detect
    for uid, slot in history.changes.items():
        before = [u for u, s in history.slot_of.items() if s == slot and order[u] < order[uid]]
        assert any(values.change(text[u], text[uid]) is not None for u in before), text[uid]
