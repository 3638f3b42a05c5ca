"""Whether a text records leaving something behind: that it was replaced, dropped or moved away
from, or why. Pure.

An abandoned approach's name is suppressed so recall stops recommending it; a memory that tells the
story of leaving it ("We replaced Celery with arq for background jobs", "Celery was dropped because
its workers leaked memory", "we moved CI from Jenkins to GitHub Actions") is the one worth finding
then, and stays visible (kenning.memory.suppression). A recommendation or a plan to use it ("move
the ORM layer to Tortoise", "Tortoise could give us async models") is not such a record.
"""

from __future__ import annotations

import functools
import re

_GONE = (
    r"replaced|dropped|abandoned|removed|retired|ditched|deprecated|decommissioned|given up"
    r"|phased out|ripped out|sunset"
)
_LEAVE = r"replac\w*|drop\w*|abandon\w*|remov\w*|retir\w*|ditch\w*|deprecat\w*|decommission\w*"
_QUIT = r"gave up(?: on)?|got rid of|stopped using|no longer use\w*"
_MOVE = r"mov\w*|migrat\w*|switch\w*|port\w*|transition\w*"


@functools.lru_cache(maxsize=256)
def _patterns(term: str) -> re.Pattern[str]:
    t = r"(?<!\w)" + re.escape(term) + r"(?!\w)"
    forms = (
        rf"\b(?:{_LEAVE}|{_QUIT}) (?:the |our )?{t}",
        rf"{t}(?: \w+){{0,3}} (?:was|were|is|has been|have been|got) (?:\w+ )?(?:{_GONE})\b",
        rf"\b(?:{_MOVE})\b(?: [\w-]+){{0,4}} from (?:the |our )?{t}",
        rf"\bfrom (?:the |our )?{t} to\b",
        rf"\binstead of (?:the |our )?{t}",
        rf"{t}(?: \w+){{0,3}} (?:was|were) (?:too|never)\b",
    )
    return re.compile("|".join(f"(?:{f})" for f in forms), flags=re.IGNORECASE)


def records_departure(text: str, term: str) -> bool:
    """Whether ``text`` says ``term`` (a phrase, case-insensitive) was replaced, dropped or moved
    away from, or why it was."""
    return (
        bool(term) and _patterns(" ".join(term.split())).search(" ".join(text.split())) is not None
    )
