"""A generated multi-session history with known answers: memory that holds over time. Pure.

Weekly sessions between people about services, from ``START`` on, each turn dated with its session:
greetings and sign-offs, decisions, a question and its answer, and values that change (ports,
versions, owners, hosts, schedules). The questions name dates with years (``dated``), ask about a
specific fact from the first months (``old_fact``), ask for a value after it changed (``current``),
and ask what a question turn asked about (``answer``: the answer turn is the target). Our own
templates; the seed fixes everything.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any

START = date(2023, 1, 9)  # a Monday
PROJECT = "timeline"
PEOPLE = ("Priya", "Nate", "Joanna", "Marco", "Aiko", "Tomas", "Leila", "Bruno")
SERVICES = (
    "billing",
    "search",
    "checkout",
    "inventory",
    "notifications",
    "reporting",
    "auth",
    "shipping",
)
DECISIONS = (
    "freeze the public API until the audit is done",
    "move the nightly export to object storage",
    "drop the legacy XML endpoint",
    "add a canary stage before every release",
    "cap retries at three",
    "log request bodies only in staging",
    "rotate the signing keys every ninety days",
    "split the read replica from the reporting queries",
    "keep feature flags for at most two sprints",
    "require two reviewers for schema migrations",
    "batch the webhooks every five minutes",
    "serve thumbnails from the CDN",
    "stop paging on warnings at night",
    "pin the base image by digest",
)
TOOLS = (
    ("Valkey", "its search module is fast and it is open source"),
    ("Caddy", "it renews certificates on its own"),
    ("Temporal", "workflows survive restarts"),
    ("DuckDB", "analysts can query parquet files directly"),
    ("Loki", "it indexes labels, not log lines"),
    ("Renovate", "it groups dependency updates per week"),
    ("Tilt", "local clusters reload on save"),
    ("Vector", "one binary ships logs and metrics"),
)
FACTS = (
    "the vendor files arrive as semicolon-separated CSV in Latin-1",
    "the tax tables come from the finance share every quarter",
    "refunds above 500 euros need a second approver",
    "the partner API rate limit is 20 requests per second",
    "warehouse codes are three letters and a digit",
    "the courier labels must be A6 PDF files",
    "the staging database is reset every Sunday night",
    "invoice numbers restart at 1 every January",
)
SLOTS = {  # slot -> (statement of a value, question, values to pick from)
    "port": (
        "The {s} service runs on port {v}.",
        "What port does the {s} service run on?",
        ("8080", "8081", "9090", "9443", "7000", "5001"),
    ),
    "version": (
        "The {s} service is pinned to Python {v}.",
        "Which Python version is the {s} service pinned to?",
        ("3.9", "3.10", "3.11", "3.12"),
    ),
    "owner": ("The {s} service is owned by {v}.", "Who owns the {s} service?", PEOPLE),
    "host": (
        "The {s} database host is {v}.",
        "What is the database host of the {s} service?",
        ("db1.internal", "db2.internal", "pg-main.internal", "pg-replica.internal"),
    ),
    "schedule": (
        "The {s} batch job runs every {v}.",
        "When does the {s} batch job run?",
        ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday"),
    ),
}
CHANGED = "Update: the {s} {rest}"  # a value change restates the slot with the new value
GREETINGS = ("{a}: Hi {b}!", "{a}: Morning {b}, how are you?", "{a}: Hey {b}, good to see you.")
SIGN_OFFS = ("{a}: Bye {b}!", "{a}: Thanks {b}, talk soon!", "{a}: Great, see you next week {b}.")
ACKS = ("{a}: Sounds good.", "{a}: Okay, thanks!", "{a}: Got it.")


@dataclass(frozen=True)
class Turn:
    uid: str
    text: str
    at: float  # epoch seconds: when it was said (created_at and event_date)


@dataclass(frozen=True)
class Question:
    kind: str  # dated | old_fact | current | answer
    text: str
    target: str


@dataclass
class History:
    turns: list[Turn] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)
    # newer uid -> (service, slot)
    changes: dict[str, tuple[str, str]] = field(default_factory=dict)
    # every value uid -> (service, slot)
    slot_of: dict[str, tuple[str, str]] = field(default_factory=dict)

    @property
    def last(self) -> float:
        return max(t.at for t in self.turns)


def _ts(day: date, minute: int) -> float:
    return datetime(day.year, day.month, day.day, 10, tzinfo=UTC).timestamp() + 60 * minute


def _long(day: date) -> str:
    return f"{day:%B} {day.day}, {day.year}"


def generate(seed: int = 7, weeks: int = 78) -> History:
    """``weeks`` weekly sessions from ``START`` (78 weeks: January 2023 to mid 2024)."""
    rng = random.Random(f"history:{seed}")
    h = History()
    current: dict[tuple[str, str], tuple[str, str]] = {}  # (service, slot) -> (value, uid)
    decided: list[tuple[date, str, str, str]] = []
    for week in range(weeks):
        day = START + timedelta(weeks=week)
        a, b = rng.sample(PEOPLE, 2)
        minute = iter(range(100))

        def say(
            text: str, kind: str, day: date = day, week: int = week, minute: Any = minute
        ) -> str:
            uid = f"w{week}-{kind}-{len(h.turns)}"
            h.turns.append(Turn(uid=uid, text=text, at=_ts(day, next(minute))))
            return uid

        say(rng.choice(GREETINGS).format(a=a, b=b), "hello")
        say(rng.choice(GREETINGS).format(a=b, b=a), "hello")
        service = SERVICES[week % len(SERVICES)]
        action = DECISIONS[(week * 5 + seed) % len(DECISIONS)]
        uid = say(f"{a}: For the {service} service we decided to {action}.", "decision")
        decided.append((day, service, action, uid))
        _values(h, rng, say, current, week)
        if week < len(TOOLS):
            tool, why = TOOLS[week]
            say(f"{b}: What made you pick {tool} for the {service} service?", "ask")
            uid = say(f"{a}: We picked {tool} for {service} because {why}.", "answer")
            h.questions.append(Question("answer", f"Why did we pick {tool} for {service}?", uid))
        if week < len(FACTS):
            uid = say(f"{a}: Worth remembering: {FACTS[week]}.", "fact")
            h.questions.append(Question("old_fact", _fact_question(FACTS[week]), uid))
        say(rng.choice(ACKS).format(a=b), "ack")
        say(rng.choice(SIGN_OFFS).format(a=a, b=b), "bye")
    for day, service, _action, uid in decided[::3]:
        h.questions.append(
            Question("dated", f"What did we decide for the {service} service on {_long(day)}?", uid)
        )
    for (service, slot), (_value, uid) in sorted(current.items()):
        if uid in h.changes:
            h.questions.append(Question("current", SLOTS[slot][1].format(s=service), uid))
    return h


def _values(
    h: History,
    rng: random.Random,
    say: Callable[[str, str], str],
    current: dict[tuple[str, str], tuple[str, str]],
    week: int,
) -> None:
    """One value statement per session: a first value, or (every third week) a
    change of an earlier one."""
    if week % 3 == 2 and current:
        service, slot = rng.choice(sorted(current))
        old = current[(service, slot)][0]
        value = rng.choice([v for v in SLOTS[slot][2] if v != old])
        rest = SLOTS[slot][0].format(s=service, v=value).split(f"{service} ", 1)[1]
        uid = say(CHANGED.format(s=service, rest=rest), "change")
        h.changes[uid] = (service, slot)
    else:
        service, slot = SERVICES[(week * 3) % len(SERVICES)], list(SLOTS)[week % len(SLOTS)]
        if (service, slot) in current:
            return
        value = rng.choice(SLOTS[slot][2])
        uid = say(SLOTS[slot][0].format(s=service, v=value), "value")
    current[(service, slot)] = (value, uid)
    h.slot_of[uid] = (service, slot)


def _fact_question(fact: str) -> str:
    subject = fact.split(" ")[1:4]
    return f"What do we know about the {' '.join(subject)}?"
