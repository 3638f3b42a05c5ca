"""remember_document: long text stored as chunks that share a doc_id."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from kenning.knowledge.documents import Document
from mcp_server.params import Namespace, Project, Source, Tags, Title
from mcp_server.registry import tool
from mcp_server.runtime import current


@tool(scope="write")
async def remember_document(
    text: str,
    title: Title | None = None,
    namespace: Namespace = "knowledge",
    project: Project | None = None,
    tags: Tags | None = None,
    source: Source | None = None,
    strategy: Literal["paragraphs", "sentences", "fixed"] = "paragraphs",
    size: Annotated[int, Field(ge=200, le=8_000)] = 1500,
    overlap: Annotated[int, Field(ge=0, le=4_000)] = 200,
) -> dict[str, Any]:
    """Store a long text as chunks (paragraphs, sentences, or fixed size with overlap) sharing a
    doc_id. size: max characters per chunk (200-8000); overlap: for strategy "fixed" only."""
    call = current()
    document = Document(
        text=text,
        title=title,
        namespace=namespace,
        project=project,
        tags=tuple(tags or ()),
        source=source,
        strategy=strategy,
        size=size,
        overlap=overlap,
    )
    result = await call.run(call.engine.documents.remember, document, actor=call.actor)
    return result.public()
