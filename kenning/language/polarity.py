"""Polarity conflicts between two statements. Pure: no I/O, plain strings in, plain data out.

Two statements conflict when one clause of each talks about the SAME thing (its object words: what
is left once stop words, predicates and negation cues are removed) with OPPOSITE polarity:

- "do not use pickle" vs "use pickle for caching" conflict: {pickle} is inside {pickle, caching} and
  one side is negated.
- "do not use pickle" vs "do not use eval" do not: both are negative, and the objects differ anyway.
- "We deploy with Fly" vs "We no longer use Fly; we deploy with Kamal" conflict: the first clause of
  the second statement negates {fly}; the predicates (deploy / use) may differ.
- "We deploy with Fly" vs "We moved from Fly to Kamal" conflict on {fly}; "We deploy with Kamal" vs
  the same does not ("moved from X to Y" reads as "no longer X; Y").

- "shop-api does not deploy with Kamal any more" negates once: "not ... any more" is one cue.

Words are compared as lemmas (``kenning.language.words``: "uses" meets "use"); questions and plans
("should we drop Kamal?", "we might move off Fly") assert nothing and are skipped. A conflict whose
newer clause carries an explicit cue ("no longer", "any more", "dropped", "moved from", "instead
of", "again") is a *reversal* and names that cue.

This is the first-tier heuristic of contradiction detection (docs/truth-maintenance.md). It is
deliberately conservative: a pair it cannot explain by shared objects is never a conflict.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from kenning.language.words import (
    CHANGE_WORDS,
    ENDINGS,
    NOISE,
    WORD,
    lemma,
    predicate,
    sentences,
)

# Multi-word cues are rewritten to one token before splitting, so "no longer" counts once.
_PHRASES: tuple[tuple[str, str], ...] = (
    ("no longer", " nolonger "),
    ("not anymore", " nolonger "),
    ("any more", " anymore "),
    ("used to", " nolonger "),
    ("ripped out", " nolonger "),
    ("phased out", " nolonger "),
    ("shut down", " nolonger "),
    ("turned off", " nolonger "),
    ("switched off", " nolonger "),
    ("stopped using", " nolonger use "),
    ("stop using", " nolonger use "),
    ("moved away from", " nolonger use "),
    ("moved off", " nolonger use "),
    ("migrated away from", " nolonger use "),
    ("switched away from", " nolonger use "),
    ("got rid of", " nolonger use "),
    ("cannot", " not "),
    ("can't", " not "),
    ("won't", " not "),
    ("n't", " not "),
)
# "moved from X to Y" / "replaced X with Y" say two things: X no longer, Y now. Rewritten as two
# clauses so X meets "we use X" with opposite polarity while Y still agrees with "we use Y".
_CHANGES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(
            r"\b(?:switch|switched|switching|move|moved|moving|migrate|migrated|migrating"
            r"|change|changed|went)\s+from\s+([^;.!?\n]+?)\s+(?:to|for)\s+"
        ),
        r" nolonger use \1; use ",
    ),
    (
        re.compile(r"\b(?:replace|replaced|replacing)\s+([^;.!?\n]+?)\s+(?:with|by)\s+"),
        r" nolonger use \1; use ",
    ),
)

# texts whose reading is kept (each a few hundred bytes of parsed clauses)
CLAUSES_CACHE = 4096

# A clause that follows these words is about the thing that was NOT chosen.
_CONTRAST = re.compile(r"\b(?:instead of|rather than|in place of)\b")
_CLAUSE_SPLIT = re.compile(r"[;!?\n()]+|\.(?:\s+|$)|,|\b(?:but|however|whereas)\b")
_WORD = WORD
# the cues that make a conflict an explicit reversal (see the module docstring)
_REVERSAL = frozenset({"nolonger", "anymore", "again", "back", "instead"}) | ENDINGS

NEGATIONS = frozenset(
    {
        "not",
        "no",
        "never",
        "nolonger",
        "nor",
        "neither",
        "without",
        "avoid",
        "avoids",
        "avoided",
        "stop",
        "stopped",
        "deprecated",
        "banned",
        "forbidden",
        "disallowed",
        "dropped",
        "removed",
        "abandoned",
        "none",
        "don",
        "dont",
        "doesnt",
        "isnt",
        "arent",
        "wasnt",
        "shouldnt",
        "mustnt",
    }
)
STOP_WORDS = frozenset(
    {
        "a",
        "an",
        "the",
        "we",
        "i",
        "you",
        "they",
        "he",
        "she",
        "it",
        "our",
        "my",
        "your",
        "their",
        "its",
        "this",
        "that",
        "these",
        "those",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "do",
        "does",
        "did",
        "done",
        "to",
        "of",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "as",
        "and",
        "or",
        "so",
        "if",
        "then",
        "than",
        "there",
        "here",
        "all",
        "any",
        "some",
        "also",
        "just",
        "only",
        "still",
        "now",
        "always",
        "should",
        "must",
        "will",
        "would",
        "can",
        "could",
        "may",
        "might",
        "shall",
        "have",
        "has",
        "had",
        "us",
        "me",
        "them",
        "what",
        "which",
        "who",
        "when",
        "where",
        "how",
        "why",
        "very",
        "more",
        "most",
        "less",
        "into",
        "onto",
        "over",
        "under",
        "about",
        "via",
        "per",
        "please",
        "instead",
        "rather",
        "ever",
        "again",
        "currently",
        "anything",
        "everything",
        "everywhere",
        "today",
    }
)
# Predicates: the verb slot. They may differ between the two sides ("deploy with" vs "use").
PREDICATES = frozenset(
    {
        "use",
        "using",
        "used",
        "deploy",
        "deploying",
        "deployed",
        "run",
        "running",
        "ran",
        "prefer",
        "preferred",
        "want",
        "wanted",
        "like",
        "need",
        "needed",
        "store",
        "stored",
        "keep",
        "kept",
        "call",
        "called",
        "host",
        "hosted",
        "support",
        "supported",
        "enable",
        "enabled",
        "allow",
        "allowed",
        "require",
        "required",
        "recommend",
        "recommended",
        "pick",
        "picked",
        "choose",
        "chose",
        "chosen",
        "go",
        "went",
        "rely",
        "depend",
        "install",
        "installed",
        "put",
        "ship",
        "shipped",
        "adopt",
        "adopted",
        "migrate",
        "migrated",
        "switch",
        "switched",
        "move",
        "moved",
        "write",
        "wrote",
        "written",
        "work",
        "worked",
        "return",
        "returned",
        "make",
        "made",
        "get",
        "got",
        "let",
        "set",
        "add",
        "added",
        # locative and transfer verbs (lemmas): "lives in", "points to", "listens on", "sends to"
        "live",
        "sit",
        "point",
        "listen",
        "serve",
        "bind",
        "expose",
        "send",
        "stay",
        "target",
        "manage",
        "publish",
        "accept",
        "handle",
        "take",
        "give",
    }
)


@dataclass(frozen=True)
class Clause:
    """One clause of a statement: its polarity and the object words it is about."""

    text: str
    negated: bool
    objects: frozenset[str]
    cue: str = ""  # the explicit reversal cue the clause carries, if any


@dataclass(frozen=True)
class Conflict:
    """Why two statements conflict: the two clauses and the object words they share."""

    clause_a: str
    clause_b: str
    shared: tuple[str, ...]
    cue: str = ""  # the newer clause's explicit reversal cue ("no longer", "dropped"), if any

    @property
    def reversal(self) -> bool:
        """Whether the second statement reverses the first explicitly (it names a cue)."""
        return bool(self.cue)

    def evidence(self) -> dict[str, object]:
        out: dict[str, object] = {
            "clause_a": self.clause_a,
            "clause_b": self.clause_b,
            "shared": list(self.shared),
        }
        if self.cue:
            out["kind"] = "reversal"
            out["cue"] = self.cue
            out["why"] = (
                f"the newer clause {self.clause_b!r} turns {', '.join(self.shared)} around "
                f"({self.cue!r})"
            )
        return out


def stem(word: str) -> str:
    """A light plural strip so "returns"/"return" and "caches"/"cache" meet; short words stay."""
    if word.endswith(("sses", "xes", "zes")) and len(word) >= 5:
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) >= 4:
        return word[:-1]
    return word


def _normalise(text: str) -> str:
    out = " " + text.lower().replace("\u2019", "'") + " "
    for pattern, replacement in _CHANGES:
        out = pattern.sub(replacement, out)
    for phrase, token in _PHRASES:
        out = out.replace(phrase, token)
    return out


@functools.lru_cache(maxsize=CLAUSES_CACHE)
def clauses(text: str) -> tuple[Clause, ...]:
    """Split a statement into clauses; text after "instead of"/"rather than" is a negated clause.
    Questions and plans are skipped (``kenning.language.words.sentences``). Pure, so kept per
    text: a remember reads its own text once per neighbour it is compared with."""
    out: list[Clause] = []
    for sentence in sentences(text):
        for part in _CLAUSE_SPLIT.split(_normalise(sentence)):
            if not part or not part.strip():
                continue
            head, *tails = _CONTRAST.split(part)
            out.append(_clause(head, flip=False, cue=""))
            out += [_clause(tail, flip=True, cue="instead of") for tail in tails]
    return tuple(c for c in out if c.objects)


def negating(word: str) -> bool:
    """Whether a word negates its clause ("not", "never", "dropped", "retired", ...)."""
    return word in NEGATIONS or word in ENDINGS or lemma(word) in ENDINGS


def _clause(text: str, *, flip: bool, cue: str) -> Clause:
    words = [w.strip("._/:-") for w in _WORD.findall(text)]
    words = [w for w in words if w]
    negations = sum(1 for w in words if negating(w))
    objects = frozenset(
        lemma(w)
        for w in words
        if not negating(w)
        and w not in STOP_WORDS
        and not predicate(w, PREDICATES)
        and lemma(w) not in CHANGE_WORDS
        and w not in NOISE
        and len(w) > 1
    )
    found = cue or next((_spoken(w) for w in words if lemma(w) in _REVERSAL), "")
    return Clause(
        text=" ".join(words),
        negated=(negations % 2 == 1) != flip,
        objects=objects,
        cue=found,
    )


def _spoken(word: str) -> str:
    return {"nolonger": "no longer", "anymore": "any more"}.get(word, word)


def conflict(a: str, b: str) -> Conflict | None:
    """The first pair of clauses with opposite polarity about the same objects, or None.

    "The same objects": the shared words are non-empty and one clause's objects contain all of the
    other's (so "use pickle for caching" still meets "do not use pickle", but "use eval" does not).
    """
    for left in clauses(a):
        for right in clauses(b):
            if left.negated == right.negated:
                continue
            shared = left.objects & right.objects
            if shared and (left.objects <= right.objects or right.objects <= left.objects):
                return Conflict(
                    clause_a=left.text,
                    clause_b=right.text,
                    shared=tuple(sorted(shared)),
                    cue=right.cue,
                )
    return None
