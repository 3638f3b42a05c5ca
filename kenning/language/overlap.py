"""What a question and a memory say in common: the question's key terms and how many of them a
memory holds. Pure.

A question's key terms are the lemmas of its content words, less the words every question is
made of ("what", "tell", "remind", "know") and small talk. A memory that holds none of them is
near the question by meaning only -- the evidence a recall's verdict weighs against a middling
similarity (kenning.memory.confidence).

Compounds count whole and by part: "proof-of-delivery" meets "proof-of-delivery" and "delivery";
"pod photos" meets "photo".
"""

from __future__ import annotations

import functools
import re

from kenning.language.polarity import STOP_WORDS
from kenning.language.substance import SMALL_TALK
from kenning.language.words import lemma

_WORD = re.compile(r"[a-z0-9][a-z0-9'_.\-/#+]*")
_EDGE = "'.-/_"
# words a question is built from, whatever it asks (lemmas)
ASKING = frozenset(
    {
        "tell",
        "remind",
        "know",
        "explain",
        "describe",
        "show",
        "find",
        "look",
        "ask",
        "question",
        "anyone",
        "someone",
        "something",
        "thing",
        "stuff",
        "idea",
        "note",
        "info",
        "whether",
        "do",
        "get",
        "let",
        "say",
        "said",
        "happen",
        "before",
        "i'm",
        "i'd",
        "i've",
        "what's",
        "whats",
        "where's",
        "who's",
        "how's",
        "it's",
        "isn't",
        "don't",
        "didn't",
        "we're",
        "there's",
    }
)


def key_terms(text: str) -> frozenset[str]:
    """The lemmas of ``text``'s content words (see the module docstring)."""
    out: set[str] = set()
    for raw in _WORD.findall(text.lower()):
        word = raw.strip(_EDGE)
        if len(word) < 2 or word in STOP_WORDS or word in SMALL_TALK:
            continue
        form = lemma(word)
        if form in ASKING or word in ASKING:
            continue
        out.add(form)
    return frozenset(out)


@functools.lru_cache(maxsize=4096)
def held_terms(content: str) -> frozenset[str]:
    """Every lemma ``content`` holds, compounds whole and by part."""
    out: set[str] = set()
    for raw in _WORD.findall(content.lower()):
        word = raw.strip(_EDGE)
        if not word:
            continue
        out.add(word)
        out.add(lemma(word))
        for part in re.split(r"[\-/_.]", word):
            if part:
                out.add(part)
                out.add(lemma(part))
    return frozenset(out)


def coverage(terms: frozenset[str], content: str) -> float:
    """The share of ``terms`` that ``content`` holds (1.0 for a question without key terms)."""
    if not terms:
        return 1.0
    held = held_terms(content)
    return sum(1 for t in terms if t in held or _parts_held(t, held)) / len(terms)


def _parts_held(term: str, held: frozenset[str]) -> bool:
    parts = [p for p in re.split(r"[\-/_.]", term) if p]
    return len(parts) > 1 and all(p in held or lemma(p) in held for p in parts)
