"""Whole-word and phrase matching for names, terms and hints. Pure: no I/O.

Text is case-folded (NFKC first) and cut into word tokens. A token is a run of letters, digits and
underscores, followed by any trailing ``+``/``#`` (so ``c++`` and ``c#`` stay themselves instead of
collapsing into ``c``). Every other character separates tokens, which makes ``node.js`` the phrase
``node js`` and ``react-query`` the phrase ``react query``.

A phrase matches a text when its tokens occur in the text as a contiguous run of whole tokens:
``go`` matches "use go here" and "go-redis" but never "google" or "ago".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from kenning.core.errors import InvalidInput
from kenning.core.validation import MAX_QUERY

_TOKEN = re.compile(r"\w+[+#]*")
MAX_PHRASE_TOKENS = 8


def tokens(text: str) -> tuple[str, ...]:
    """The case-folded word tokens of ``text``."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return tuple(_TOKEN.findall(folded))


def normalise(phrase: str) -> str:
    """The canonical form of a name or term: its tokens joined by single
    spaces ('' when it has none)."""
    return " ".join(tokens(phrase))


def ngrams(text: str, longest: int = MAX_PHRASE_TOKENS) -> set[str]:
    """Every run of 1..``longest`` consecutive tokens of ``text``, in normalised form.

    A phrase (normalised, at most ``longest`` tokens) matches ``text`` exactly when it is in this
    set, which turns "which of N stored phrases occur in this query" into set
    look-ups instead of N scans.
    """
    toks = tokens(text)
    out: set[str] = set()
    for size in range(1, min(longest, len(toks)) + 1):
        for start in range(len(toks) - size + 1):
            out.add(" ".join(toks[start : start + size]))
    return out


def contains(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` as whole tokens (case-folded)."""
    wanted = tokens(phrase)
    if not wanted:
        return False
    have = tokens(text)
    size = len(wanted)
    return any(have[i : i + size] == wanted for i in range(len(have) - size + 1))


def found_in(text: str, phrases: Iterable[str]) -> list[str]:
    """The normalised phrases (from ``phrases``) that occur in ``text``, in the order given."""
    wanted = list(phrases)
    grams = ngrams(text, longest=max((len(tokens(p)) for p in wanted), default=1))
    seen: list[str] = []
    for phrase in wanted:
        norm = normalise(phrase)
        if norm and norm in grams and norm not in seen:
            seen.append(norm)
    return seen


def query_text(value: str, *, what: str = "query", limit: int = MAX_QUERY) -> str:
    """A query, topic or plan as given by a caller: non-empty, at most
    ``limit`` characters, stripped."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{what} is empty", hint=f"give the {what} as a few words or a question")
    if len(value) > limit:
        raise InvalidInput(
            f"{what} is {len(value):,} characters; the limit is {limit:,}",
            hint=f"shorten the {what} to its key words",
        )
    return value.strip()


def search_words(phrase: str) -> tuple[str, ...]:
    """Word parts of a phrase for a full-text candidate query (the engines split
    on punctuation, not '_').

    The full-text index is only a candidate generator: it stems and splits differently from
    ``tokens``, so every candidate is confirmed with ``contains``.
    """
    parts = re.findall(r"\w+", unicodedata.normalize("NFKC", phrase).casefold())
    return tuple(dict.fromkeys(p for p in parts if p not in STOPWORDS))


# The default stop-word list of the full-text engines: such words are not indexed, so a query on one
# finds nothing. They are left out of candidate queries (and confirmed by ``contains`` afterwards).
STOPWORDS = frozenset(
    (
        "a",
        "is",
        "the",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
    )
)


_SPECIFIC = re.compile(r"[A-Za-z_]*\d[\w.\-=:/]*")


_SPEAKER = re.compile(r"^\s*([A-Z][\w.'-]{0,40})\s*:\s")
_SENTENCE = re.compile(r"(?:^|[.!?:;]\s+|\n)\s*")
_NAME = re.compile(r"(?<![\w.'-])[A-Z][\w'-]*")


def specifics(text: str) -> frozenset[str]:
    """The tokens that pin a statement down, lower-cased. Pure.

    Numbers, versions and digit-bearing names ("1.23.3" of "numpy==1.23.3", "E11000", "psycopg2",
    "2", the day and year of a date), trailing punctuation dropped; and names (a capitalised word
    that does not start a sentence: people, services, projects, months), prefixed ``name:``. Two
    texts that embed alike but differ here say different things ("at most 2 retries" vs "at most
    4"): the duplicate check stores the second instead of refusing it.
    """
    found = {t.rstrip(".:-/=").lower() for t in _SPECIFIC.findall(text)}
    starts = {m.end() for m in _SENTENCE.finditer(text)}
    found |= {
        f"name:{m[0].lower()}"
        for m in _NAME.finditer(text)
        if m.start() not in starts and not any(c.isdigit() for c in m[0])
    }  # "E11000": a code, above
    return frozenset(found)


def speaker(text: str) -> str | None:
    """The speaker of a conversational turn ("Nate: ..." -> "nate"), or None. Pure."""
    found = _SPEAKER.match(text)
    return found[1].lower() if found else None


def swapped_roles(a: str, b: str) -> bool:
    """Whether two turns are the same words with the speakers' roles swapped ("Nate: Bye Joanna!"
    vs "Joanna: Bye Nate!"): both have a speaker, they differ, and each speaker is named in the
    other text. A label such as "Note:" or "Decision:" added to a repeat is not a swap (it
    is not named in the other)."""
    one, two = speaker(a), speaker(b)
    return (
        one is not None and two is not None and one != two and one in tokens(b) and two in tokens(a)
    )
