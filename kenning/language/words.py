"""Words as the polarity and value checks read them: lemmas, cues and the sentences they skip. Pure.

Lemmas come from simplemma (its English dictionary, bundled in the wheel: no download), so
"uses", "used" and "using" all meet "use" and a word list names each verb once. The cue sets
below are small closed classes (negation, change, addition, intent) that no library lists;
everything open-ended (verbs, nouns, names, quantities) is read by rule, not listed.
"""

from __future__ import annotations

import re
from functools import lru_cache

import simplemma

WORD = re.compile(r"[a-z0-9][a-z0-9+#._/:-]*")


@lru_cache(maxsize=65_536)
def lemma(word: str) -> str:
    """The dictionary form of a lower-case word ("deploys" -> "deploy"); a word with digits,
    dots or slashes (an identifier) is its own lemma."""
    if not word.isalpha():
        return word
    return str(simplemma.lemmatize(word, lang="en")).lower()


def predicate(word: str, predicates: frozenset[str]) -> bool:
    """Whether a lower-case word is one of ``predicates`` (lemmas or forms). An -ing form not
    listed itself is read as a noun ("the shipping service", "billing"), not as its verb."""
    return word in predicates or (not word.endswith("ing") and lemma(word) in predicates)


def warm() -> None:
    """Load simplemma's English dictionary now (about 1.5 s once per process) rather than at the
    first write that meets a candidate."""
    lemma("deploys")


# Ending verbs and words that say a thing stopped being true (lemmas): a clause holding one of
# these negates what it names, like "not" does.
ENDINGS = frozenset(
    {
        "stop",
        "drop",
        "remove",
        "retire",
        "decommission",
        "deprecate",
        "abandon",
        "kill",
        "ditch",
        "scrap",
        "disable",
        "sunset",
        "gone",
        "ban",
        "forbid",
        "disallow",
        "nothing",
        "nobody",
        "nolonger",
    }
)
# Verbs of change (lemmas) and words that mark the newer statement as an update.
CHANGE_VERBS = frozenset(
    {
        "move",
        "switch",
        "migrate",
        "change",
        "replace",
        "bump",
        "raise",
        "lower",
        "increase",
        "decrease",
        "reduce",
        "upgrade",
        "downgrade",
        "update",
        "swap",
        "rename",
        "shift",
        "push",
        "postpone",
        "slip",
        "extend",
        "shorten",
        "scale",
        "tighten",
        "loosen",
        "relax",
        "set",
        "put",
        "turn",
    }
)
CHANGE_WORDS = frozenset(
    {"now", "nowadays", "instead", "anymore", "back", "since", "starting", "effective", "again"}
)
# Words that make a clause an addition to what was said, not a replacement.
ADDITIVE = re.compile(
    r"\b(?:also|too|as well|additionally|in addition|plus|besides|alongside|another)\b|^\s*and\b"
)
# A sentence that asks, plans or supposes asserts nothing.
INTENT = re.compile(
    r"\b(?:(?:we|i|they|you)(?: are|'re)? plan(?:s|ning|ing)? to|plan(?=:)"
    r"|proposal|propose|proposed|rfc|todo|maybe|perhaps|might"
    r"|could|would|should|consider|considering|intend|intends|thinking about|want to"
    r"|going to|eventually|someday|at some point|if we|if the|once we|once the"
    r"|next (?:sprint|quarter|week|month|year))\b"
)
# Chat filler and time adjuncts: never a subject
NOISE = frozenset(
    {
        "fyi",
        "btw",
        "fwiw",
        "afaik",
        "imo",
        "rn",
        "pls",
        "ok",
        "okay",
        "yep",
        "yeah",
        "heads",
        "up",
        "down",
        "reminder",
        "note",
        "update",
        "last",
        "week",
        "weekend",
        "yesterday",
        "today",
        "tomorrow",
        "ago",
        "year",
        "month",
        "quarter",
        "currently",
        "like",
        "straight",
        "good",
    }
)


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


# "Priya: We picked Valkey ..." -- a speaker's name before a sentence of three words or more
_SPEAKER = re.compile(r"(?P<name>[A-Z][a-z]+):\s+(?=\S+\s+\S+\s+\S)")
# "we are not accepting PayPal": after a form of "be" (or "not") an -ing word is the verb
_PROGRESSIVE = re.compile(r"\b((?:is|are|am|was|were|be|been|'re|not|n't)\s+)([a-z]+ing)\b", re.I)


def sentences(text: str) -> list[str]:
    """The sentences of ``text`` that assert something: questions, plans and short exclamations
    are left out, and a speaker's name before a sentence ("Priya: ...") is not part of it."""
    out: list[str] = []
    for part in _SENTENCE.split(text):
        sentence = part.strip()
        if not sentence or sentence.endswith("?"):
            continue
        if sentence.endswith("!") and len(sentence.split()) <= 4:
            continue  # "Priya: Hi Nate!", "Okay, thanks!": chatter
        if INTENT.search(sentence.lower().replace("\u2019", "'")):
            continue
        speaker = _SPEAKER.match(sentence)
        if speaker and lemma(speaker["name"].lower()) not in CHANGE_VERBS | NOISE:
            sentence = sentence[speaker.end() :]
        out.append(_PROGRESSIVE.sub(lambda m: m[1] + lemma(m[2].lower()), sentence))
    return out
