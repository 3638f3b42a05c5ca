"""The corpus generator and the query families: deterministic per seed, exact
sizes, sound ground truth."""

from __future__ import annotations

import random
import re

import pytest

from bench import families
from bench.corpus import GLOBAL, PER_PROJECT, generate
from bench.scenarios import SCENARIOS


def test_same_seed_same_corpus_and_other_seed_differs() -> None:
    first = generate("1k", seed=3)
    again = generate("1k", seed=3)
    other = generate("1k", seed=4)
    assert [i.content for i in first.items] == [i.content for i in again.items]
    assert [i.content for i in first.items] != [i.content for i in other.items]


@pytest.mark.parametrize(("size", "count"), [("1k", 1_000), ("10k", 10_000)])
def test_sizes_are_exact_and_uids_unique(size: str, count: int) -> None:
    corpus = generate(size)
    assert len(corpus.items) == count
    assert len({i.uid for i in corpus.items}) == count
    assert len(corpus.projects()) == (count - 6) // PER_PROJECT


def test_unknown_size_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown corpus size"):
        generate("5k")


def test_every_template_slot_is_filled_and_every_scenario_used() -> None:
    corpus = generate("1k")
    assert not [i.content for i in corpus.items if re.search(r"\{[a-z_]+\}", i.content)]
    used = {i.scenario for i in corpus.items}
    assert {s.id for s in SCENARIOS} <= used


def test_identifiers_are_in_their_memory_and_unique() -> None:
    corpus = generate("1k")
    carriers = [i for i in corpus.items if i.ident and i.scenario and i.scenario.startswith("bug-")]
    assert carriers
    assert all(i.ident and i.ident in i.content for i in carriers)
    assert len({i.ident for i in carriers}) == len(carriers)


def test_families_are_deterministic_and_point_at_real_items() -> None:
    corpus = generate("1k")
    uids = {i.uid for i in corpus.items}
    one = families.paraphrase_queries(corpus, random.Random(1), 30)
    two = families.paraphrase_queries(corpus, random.Random(1), 30)
    assert one == two
    for builder in (
        families.verbatim_queries,
        families.paraphrase_queries,
        families.identifier_queries,
        families.distractor_queries,
    ):
        queries = builder(corpus, random.Random(2), 20)
        assert queries
        assert all(q.targets and set(q.targets) <= uids for q in queries)


def test_distractor_twins_are_the_same_scenario_in_another_project() -> None:
    corpus = generate("1k")
    by_uid = {i.uid: i for i in corpus.items}
    queries = families.distractor_queries(corpus, random.Random(5), 30)
    assert queries
    for q in queries:
        target, twin = by_uid[q.targets[0]], by_uid[q.avoid[0]]
        assert target.scenario == twin.scenario
        assert target.project == q.project != twin.project
        assert GLOBAL not in (target.project, twin.project)


def test_duplicate_writes_mix_rewordings_and_new_facts() -> None:
    corpus = generate("1k")
    content = {i.uid: i.content for i in corpus.items}
    writes = families.duplicate_writes(corpus, random.Random(9), 40)
    dups = [w for w in writes if w.duplicate_of]
    fresh = [w for w in writes if w.duplicate_of is None]
    assert dups
    assert fresh
    assert all(w.text != content[w.near] for w in writes)
    for w in fresh:  # a new fact for its project (another project may hold the same sentence)
        assert w.text not in {i.content for i in corpus.items if i.project == w.project}


def test_near_verbatim_drops_markup_and_labels() -> None:
    corpus = generate("1k")
    item = next(i for i in corpus.items if i.scenario == "bug-pool")
    text = families.near_verbatim(item)
    assert "`" not in text
    assert not text.startswith("Bug ")
    assert text.lower()[:20] in item.content.lower()
