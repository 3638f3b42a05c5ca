"""When a near-identical memory is a repeat: the same statement about the same event. A different
polarity, value, role or date makes it another memory (the write path and bulk import ask here)."""

from __future__ import annotations

from kenning.core.models import FEED_KIND, Memory
from kenning.language import phrases, roles
from kenning.truth.detection import conflict


def same_statement(existing: str, new: str) -> bool:
    """Whether a near-identical embedding really is the same statement.

    "Do X" and "do not X" embed almost identically: an opposite statement is not a duplicate, it is
    stored so the contradiction check can flag it. "Pin numpy 1.23.3" and "Pin numpy 1.26.1" embed
    alike too: a different number, version or identifier is an update, not a repeat; so is any
    pair the contradiction check reads as a change ("every two weeks" then "every week now"), and
    the same names in another order, another actor and another value (kenning.language.roles).
    """
    return (
        conflict(existing, new) is None
        and phrases.specifics(existing) == phrases.specifics(new)
        and not phrases.swapped_roles(existing, new)
        and not roles.different_facts(existing, new)
    )


DAY_SECONDS = 86_400.0
# a feed re-posts an article (another GUID, a date a day or two on): the same event for a week
REPOST_SECONDS = 7 * DAY_SECONDS


def window(memory: Memory) -> float:
    """How far apart two event dates of one statement may be and still name one event: a day,
    a week for a feed article (re-posts, mirrors and syndication re-date the same news)."""
    return REPOST_SECONDS if memory.kind == FEED_KIND else DAY_SECONDS


def same_event(existing: float | None, new: float | None, within: float = DAY_SECONDS) -> bool:
    """Whether two event dates name the same event: less than ``within`` apart (a missing date
    names none: it matches anything).

    "We decided X" said in two sessions a month apart is two events, not a repeat."""
    return existing is None or new is None or abs(existing - new) < within
