"""Who does what to whom: what makes two near-identical sentences different facts. Pure.

"payments-gateway calls tax-engine over gRPC" and "tax-engine calls payments-gateway over gRPC"
embed almost alike (cosine above the duplicate threshold), and so do "Marco found a leak" and "Chen
found a leak", or "the timeout is short" and "the timeout is long". ``different_facts`` says when
such a pair states two facts, so the duplicate check stores the second instead of refusing it:

- the same names in another order (a role swap: caller and callee, finder and found);
- one name in place of another (another actor, another service);
- one content word in place of another, not an inflection of it (another value).

A name is a word with a capital letter, an inner hyphen or a digit that is not a stop word
("vault-proxy", "Marco", "gRPC", "E11000"); a label at the start ("Note:", "Decision:") is not one.
A rewording that only adds words ("Note: ...", "(confirmed again)") or changes punctuation or case
is the same fact.
"""

from __future__ import annotations

import re

from kenning.language.polarity import STOP_WORDS

_WORD = re.compile(r"[A-Za-z0-9][\w'+#]*(?:[-.][\w'+#]+)*")
_LABEL = re.compile(r"^\s*[A-Z][\w-]{0,30}:\s")
_INFLECTION = 4  # words sharing their first 4 letters are taken for forms of one word


def different_facts(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` state different facts by role order, actor or value (see the
    module docstring). Pure."""
    names_a, names_b = _names(a), _names(b)
    if set(names_a) == set(names_b) and _order(names_a) != _order(names_b):
        return True  # a role swap
    if set(names_a) - set(names_b) and set(names_b) - set(names_a):
        return True  # another actor or name in the same place
    return _one_word_swapped(_content(a), _content(b))


def _words(text: str) -> list[str]:
    return _WORD.findall(_LABEL.sub(" ", text, count=1))


def _names(text: str) -> list[str]:
    return [w.casefold() for w in _words(text) if _is_name(w)]


def _is_name(word: str) -> bool:
    if len(word) >= 2 and word.isupper():
        return True  # "US", "EU", "AOF": capitals are a name even where the word is a stop word
    return word.casefold() not in STOP_WORDS and (
        any(c.isupper() or c.isdigit() for c in word) or "-" in word
    )


def _order(names: list[str]) -> list[str]:
    return list(dict.fromkeys(names))


def _content(text: str) -> list[str]:
    return [w.casefold() for w in _words(text) if w.casefold() not in STOP_WORDS]


def _one_word_swapped(a: list[str], b: list[str]) -> bool:
    """The same content words but one, at the same place, and not a form of it."""
    if len(a) != len(b) or not a:
        return False
    changed = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    return len(changed) == 1 and changed[0][0][:_INFLECTION] != changed[0][1][:_INFLECTION]
