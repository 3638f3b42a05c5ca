"""Chunking (pure, plain data) and remembering a document as chunks that share a doc_id."""

from __future__ import annotations

import pytest

from kenning.core.errors import InvalidInput
from kenning.engine import Engine
from kenning.knowledge.documents import (
    MAX_CHUNKS,
    Document,
    chunk,
    fixed,
    paragraphs,
    sentences,
    split_sentences,
)
from kenning.memory.listing import Listing


def test_fixed_windows_overlap_and_cover_the_text() -> None:
    text = "abcdefghijklmnopqrstuvwxyz"
    assert fixed(text, 10, 3) == ["abcdefghij", "hijklmnopq", "opqrstuvwx", "vwxyz"]
    assert fixed(text, 10, 0) == ["abcdefghij", "klmnopqrst", "uvwxyz"]
    assert fixed("short", 10, 3) == ["short"]
    assert fixed(text, 13, 0) == ["abcdefghijklm", "nopqrstuvwxyz"]  # no empty tail window


def test_fixed_refuses_an_overlap_as_large_as_the_window() -> None:
    with pytest.raises(InvalidInput, match="overlap"):
        fixed("abc", 10, 10)


def test_sentences_are_kept_whole_and_packed() -> None:
    text = "First one. Second one is here! Is this third? Yes."
    assert sentences(text, 30) == ["First one. Second one is here!", "Is this third? Yes."]
    assert sentences(text, 1000) == [text]
    assert sentences("No end mark at all", 1000) == ["No end mark at all"]


def test_closing_quotes_and_brackets_stay_with_their_sentence() -> None:
    text = 'He said "stop." Then he left. (It rained.) [Done!] End?'
    assert split_sentences(text) == [
        'He said "stop."',
        "Then he left.",
        "(It rained.)",
        "[Done!]",
        "End?",
    ]
    assert sentences(text, 1000) == [text]  # nothing dropped when packed back together
    assert sentences(text, 20) == [
        'He said "stop."',
        "Then he left.",
        "(It rained.) [Done!]",
        "End?",
    ]
    assert split_sentences("Version 2.5 ships. Wait... what?\nYes.") == [
        "Version 2.5 ships.",
        "Wait...",
        "what?",
        "Yes.",
    ]


def test_a_sentence_longer_than_the_size_is_cut() -> None:
    assert sentences("x" * 25 + ".", 10) == ["xxxxxxxxxx", "xxxxxxxxxx", "xxxxx."]


def test_paragraphs_are_packed_and_long_ones_split_by_sentence() -> None:
    text = "Alpha para.\n\nBeta para.\n  \nGamma para."
    assert paragraphs(text, 1000) == ["Alpha para.\n\nBeta para.\n\nGamma para."]
    assert paragraphs(text, 12) == ["Alpha para.", "Beta para.", "Gamma para."]
    long = "One sentence here. Another sentence there."
    assert paragraphs(f"Intro.\n\n{long}", 25) == [
        "Intro.",
        "One sentence here.",
        "Another sentence there.",
    ]


def test_chunk_validates_strategy_size_and_overlap() -> None:
    text = "word " * 300
    assert len(chunk(text, "fixed", 500, 100)) == 4
    with pytest.raises(InvalidInput, match="unknown chunking strategy"):
        chunk(text, "chapters")
    with pytest.raises(InvalidInput, match="size"):
        chunk(text, "paragraphs", 50)
    with pytest.raises(InvalidInput, match="overlap"):
        chunk(text, "fixed", 500, 300)


def test_remember_document_stores_chunks_with_one_doc_id(engine: Engine) -> None:
    sections = [
        f"Part {n}: the {name} module handles {name} requests and keeps its own cache." * 4
        for n, name in enumerate(["billing", "search", "login", "export"])
    ]
    result = engine.documents.remember(
        Document(
            text="\n\n".join(sections), title="Modules", project="shop", tags=("design",), size=400
        ),
        actor="alice",
    )
    assert result.public()["chunks"] == 4
    assert result.public()["stored"] == 4
    page = engine.memories.list(Listing(namespaces=["knowledge"], kinds=["chunk"], limit=10))
    assert page.total == 4
    by_index = sorted(page.items, key=lambda m: m.chunk_index or 0)
    assert [m.content for m in by_index] == sections
    assert {m.doc_id for m in by_index} == {result.doc_id}
    assert {(m.title, m.project, m.tags, m.actor) for m in by_index} == {
        ("Modules", "shop", ("design",), "alice")
    }
    assert by_index[0].metadata == {"chunks": 4, "strategy": "paragraphs"}
    for memory in by_index:  # every chunk is audited on its own, with the caller as actor
        assert [(e.action, e.actor) for e in engine.store.audit.history(memory.key)] == [
            ("remember", "alice")
        ]


def test_the_same_document_again_is_reported_as_duplicates(engine: Engine) -> None:
    document = Document(
        text="Valkey keeps the memories.\n\nThe model embeds them locally.",
        size=200,
        strategy="sentences",
    )
    first = engine.documents.remember(document, actor="alice")
    second = engine.documents.remember(document, actor="alice")
    assert first.public()["stored"] == 1
    assert second.public()["duplicates"] == 1
    assert second.chunks[0].key == first.chunks[0].key


def test_bad_documents_are_refused_before_anything_is_written(engine: Engine) -> None:
    for document, message in (
        (Document(text="  "), "empty"),
        (Document(text="x" * 500_001), "limit is 500,000"),
        (
            Document(text="y. " * 100_000, strategy="fixed", size=200, overlap=0),
            f"the limit is {MAX_CHUNKS}",
        ),
        (Document(text="fine text", project="Bad Project"), "not allowed"),
    ):
        with pytest.raises(InvalidInput, match=message):
            engine.documents.remember(document, actor="alice")
    assert engine.memories.list(Listing(limit=10)).total == 0
    engine.documents.remember(Document(text="fine text", project="good-project"), actor="alice")
    # positive control: a valid document is listed
    assert engine.memories.list(Listing(limit=10)).total == 1
