"""One scenario of the synthetic corpus: a memory template with ``{slot}`` placeholders and the
paraphrase questions that ask for it (the bank: ``bench.scenarios``)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scenario:
    id: str
    group: str  # how many of a group a project carries is set in corpus.MIX
    namespace: str
    text: str
    paraphrases: tuple[str, ...]
    ident: str | None = None
    tags: tuple[str, ...] = ()


def scenario(
    id_: str,
    group: str,
    namespace: str,
    text: str,
    *paraphrases: str,
    ident: str | None = None,
    tags: tuple[str, ...] = (),
) -> Scenario:
    return Scenario(id_, group, namespace, text, tuple(paraphrases), ident, tags)
