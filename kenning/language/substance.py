"""How much a memory says: a prior that keeps small talk from crowding out statements. Pure: no I/O.

In a conversational history, "Hi!", "Thanks, see you!", "Sounds good" and bare questions ("What made
you pick it?") embed close to many queries -- short texts sit near the centre of the embedding space
-- and outrank the turns that carry the answer. The prior multiplies the
score (factor ``substance``):

- **information:** the content words of the text (tokens that are not stop words, greetings, thanks,
  sign-offs, acknowledgements or a speaker prefix). With ``FULL_WORDS`` or more the prior is 1.0;
  each missing word costs ``STEP``, down to ``FLOOR`` for a text with none ("Bye Nate!" keeps a
  name: 0.9; "We deploy with Fly" has two: 1.0).
- **questions:** a text whose every sentence is a question asks rather than states: x ``QUESTION``.

A tie-breaker, not a filter: it never hides a memory, and an engineering note is never short enough
to be touched by it (docs/recall.md, "Small talk and questions").
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import islice

from kenning.language.polarity import STOP_WORDS

FULL_WORDS = 2
STEP = 0.1
FLOOR = 0.8
QUESTION = 0.6
SMALL_TALK = frozenset(
    {
        "hi",
        "hello",
        "hey",
        "hiya",
        "yo",
        "morning",
        "evening",
        "afternoon",
        "good",
        "night",
        "bye",
        "goodbye",
        "see",
        "later",
        "soon",
        "cya",
        "cheers",
        "thanks",
        "thank",
        "thx",
        "ty",
        "welcome",
        "ok",
        "okay",
        "sure",
        "yes",
        "yeah",
        "yep",
        "no",
        "nope",
        "cool",
        "great",
        "nice",
        "awesome",
        "sounds",
        "right",
        "got",
        "gotcha",
        "lol",
        "haha",
        "wow",
        "oh",
        "ah",
        "hmm",
        "well",
        "take",
        "care",
        "talk",
        "catch",
        "up",
        "too",
        "much",
        "lot",
        "indeed",
        "exactly",
        "agreed",
        "totally",
        "definitely",
        "absolutely",
        "glad",
        "happy",
        "hear",
        "thats",
        "that's",
        "it's",
        "i'm",
        "me",
        "bye!",
        "np",
        "problem",
        "worries",
        "anytime",
        "how",
        "going",
        "doing",
        "meet",
        "again",
        "day",
        "weekend",
        "have",
        "fun",
        "luck",
        "yours",
    }
)
_SPEAKER = re.compile(r"^\s*[A-Z][\w.'-]{0,40}\s*:\s")
_WORD = re.compile(r"[a-z0-9][a-z0-9'_.-]*")
_SENTENCE_END = re.compile(r"[.!?]+(?:\s+|$)")


def content_words(text: str) -> int:
    """How many words of ``text`` carry content (not stop words or small talk;
    a speaker prefix skipped)."""
    return sum(1 for _ in _content(text))


def _content(text: str) -> Iterator[str]:
    """The content words of ``text``, in order (lazily: ``substance`` needs the first few)."""
    body = _SPEAKER.sub("", text, count=1).lower()
    for w in _WORD.finditer(body):
        word = w[0].strip(".'")
        if word not in STOP_WORDS and word not in SMALL_TALK:
            yield word


def asks_only(text: str) -> bool:
    """Whether every sentence of ``text`` is a question."""
    if "?" not in text:  # a sentence ends in "?" or the text states something
        return False
    body = _SPEAKER.sub("", text, count=1).strip()
    ends = [m[0].strip() for m in _SENTENCE_END.finditer(body)]
    tail = _SENTENCE_END.split(body)[-1].strip()  # a last sentence without end punctuation states
    return bool(ends) and not tail and all(e.startswith("?") for e in ends)


def substance(text: str) -> float:
    """The prior for ``text``: 1.0 for a statement with ``FULL_WORDS`` content words or more."""
    # only the first FULL_WORDS content words change the prior: a long note is not read through
    words = sum(1 for _ in islice(_content(text), FULL_WORDS))
    prior = max(FLOOR, 1.0 - STEP * max(0, FULL_WORDS - words))
    return prior * (QUESTION if asks_only(text) else 1.0)
