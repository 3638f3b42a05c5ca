"""Long text as chunks (docs/documents.md): three pure chunkers and ``Documents.remember``.

Every chunk becomes one memory of kind ``chunk``; the chunks of one document share a ``doc_id`` and
carry their ``chunk_index``, so a hit can be traced back to its document and neighbours.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ulid import ULID

from kenning.core import validation
from kenning.core.errors import InvalidInput
from kenning.core.models import RememberResult
from kenning.memory.memories import Draft, Memories
from kenning.runtime.context import Context

STRATEGIES = ("paragraphs", "sentences", "fixed")
MAX_DOCUMENT = 500_000
MAX_CHUNKS = 500
MIN_SIZE, MAX_SIZE = 200, 8_000
_PARAGRAPH = re.compile(r"\n\s*\n")
# the end mark and its closers stay with the sentence
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(\s+)")


def fixed(text: str, size: int, overlap: int) -> list[str]:
    """Windows of ``size`` characters, each starting ``size - overlap`` after the previous one."""
    if size < 1 or not 0 <= overlap < size:
        raise InvalidInput(f"overlap must be from 0 to size-1 (size {size}, overlap {overlap})")
    text = text.strip()
    step = size - overlap
    chunks: list[str] = []
    for start in range(0, len(text), step):
        piece = text[start : start + size].strip()
        if piece:
            chunks.append(piece)
        if start + size >= len(text):
            break
    return chunks


def split_sentences(text: str) -> list[str]:
    """Sentences, each keeping its end mark and any closing quote or bracket;
    only the space between goes."""
    parts: list[str] = []
    start = 0
    for end in _SENTENCE_END.finditer(text):
        parts.append(text[start : end.start(1)])
        start = end.end(1)
    parts.append(text[start:])
    return [part.strip() for part in parts if part.strip()]


def sentences(text: str, size: int) -> list[str]:
    """Whole sentences packed into chunks of at most ``size`` characters
    (a longer sentence is cut)."""
    return _pack(split_sentences(text.strip()), size, " ")


def paragraphs(text: str, size: int) -> list[str]:
    """Paragraphs (blank-line separated) packed into chunks of at most ``size`` characters;
    a paragraph longer than ``size`` is split by sentences."""
    parts: list[str] = []
    for para in (p.strip() for p in _PARAGRAPH.split(text.strip())):
        if para:
            parts += [para] if len(para) <= size else sentences(para, size)
    return _pack(parts, size, "\n\n")


def _pack(parts: list[str], size: int, joiner: str) -> list[str]:
    chunks: list[str] = []
    current = ""
    for part in parts:
        if len(part) > size:
            if current:
                chunks.append(current)
                current = ""
            chunks += fixed(part, size, 0)
        elif not current:
            current = part
        elif len(current) + len(joiner) + len(part) <= size:
            current += joiner + part
        else:
            chunks.append(current)
            current = part
    if current:
        chunks.append(current)
    return chunks


def chunk(
    text: str, strategy: str = "paragraphs", size: int = 1_500, overlap: int = 200
) -> list[str]:
    """Split ``text`` with the named strategy; ``overlap`` applies to ``fixed`` only."""
    if strategy not in STRATEGIES:
        raise InvalidInput(
            f"unknown chunking strategy {strategy!r}", hint=f"use one of {', '.join(STRATEGIES)}"
        )
    validation.bounded_int("size", size, MIN_SIZE, MAX_SIZE)
    if strategy == "fixed":
        return fixed(text, size, validation.bounded_int("overlap", overlap, 0, size // 2))
    return sentences(text, size) if strategy == "sentences" else paragraphs(text, size)


@dataclass(frozen=True)
class Document:
    """A document to remember as chunks."""

    text: str
    title: str | None = None
    namespace: str = "knowledge"
    project: str | None = None
    tags: tuple[str, ...] | list[str] = ()
    source: str | None = None
    strategy: str = "paragraphs"
    size: int = 1_500
    overlap: int = 200
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DocumentResult:
    doc_id: str
    chunks: tuple[RememberResult, ...]

    def public(self) -> dict[str, Any]:
        stored = sum(1 for c in self.chunks if c.status == "stored")
        return {
            "doc_id": self.doc_id,
            "chunks": len(self.chunks),
            "stored": stored,
            "duplicates": len(self.chunks) - stored,
            "keys": [c.key for c in self.chunks],
        }


class Documents:
    def __init__(self, ctx: Context, memories: Memories) -> None:
        self.ctx = ctx
        self.memories = memories

    def remember(
        self, document: Document, *, actor: str, allow_duplicate: bool = False
    ) -> DocumentResult:
        """Chunk, then remember every chunk (each validated, embedded,
        duplicate-checked and audited)."""
        if not document.text or not document.text.strip():
            raise InvalidInput("the document is empty", hint="pass the document text in `text`")
        if len(document.text) > MAX_DOCUMENT:
            raise InvalidInput(
                f"the document is {len(document.text):,} characters; the limit is {MAX_DOCUMENT:,}",
                hint="split it into several documents",
            )
        pieces = chunk(document.text, document.strategy, document.size, document.overlap)
        if len(pieces) > MAX_CHUNKS:
            raise InvalidInput(
                f"the document makes {len(pieces)} chunks; the limit is {MAX_CHUNKS}",
                hint="use a larger size or split the document",
            )
        doc_id = str(ULID())
        results = [
            self.memories.remember(
                self._draft(document, doc_id, i, len(pieces), piece),
                actor=actor,
                allow_duplicate=allow_duplicate,
            )
            for i, piece in enumerate(pieces)
        ]
        return DocumentResult(doc_id=doc_id, chunks=tuple(results))

    @staticmethod
    def _draft(document: Document, doc_id: str, index: int, total: int, text: str) -> Draft:
        metadata = {**document.metadata, "chunks": total, "strategy": document.strategy}
        return Draft(
            content=text,
            namespace=document.namespace,
            project=document.project,
            tags=document.tags,
            kind="chunk",
            title=document.title,
            source=document.source,
            doc_id=doc_id,
            chunk_index=index,
            metadata=metadata,
        )
