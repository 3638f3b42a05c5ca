"""Issue 33's families: `python -m bench.gaps [--seed 7] [--out FILE]`.

Our own templates, the seed fixes everything. Three years of weekly sessions (2023-2025) in one
project, each with small talk and one dated event (a decision, an incident or a release), each turn
at its own time (a manual clock, ``event_date`` = the turn's date), plus service facts and real
identifiers. The families:

- ``date_only``: questions that name only a period ("What happened in November 2024?", "incidents in
  2024", "Q3 2025", "between May and July 2023", "last March"): hit@5 (a memory of the period and of
  the kind asked in the top 5) and in-window@5 (the share of the top 5 from the period).
- ``abstain``: answerable and unanswerable questions of the same templates: the share that comes
  back as "no confident answer" (no hits, or ``confident`` false) on each side.
- ``roles``: swapped-role, other-actor and other-value pairs remembered after their first half: how
  many are refused as duplicates (false refusals), and reworded repeats (true duplicates, refused).
- ``ident``: service-name questions ("Where does vault-proxy keep its state?") among memories that
  all name the service, and real identifiers (error codes, tickets, versions, paths): hit@1.
- ``replaced``: an abandoned tool (auto-suppressed) whose replacement and reason must stay visible,
  and whose old recommendation must stay hidden.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.run import free_port
from kenning.core.clock import ManualClock
from kenning.core.settings import Settings
from kenning.engine import Engine
from kenning.memory.experience import Approach
from kenning.memory.memories import Draft
from kenning.memory.recall import RecallRequest, RecallResult
from kenning.ops.embedded import EmbeddedValkey
from kenning.runtime.embedding import load_embedder
from kenning.store import connect, search_module

DAY = 86_400.0
_VERBOSE = bool(__import__("os").environ.get("GAPS_VERBOSE"))
START = date(2023, 1, 2)  # a Monday
WEEKS = 156
PROJECT = "ledger"
PEOPLE = ("Priya", "Nate", "Joanna", "Marco", "Aiko", "Tomas", "Leila", "Chen")
AREAS = ("billing", "search", "checkout", "inventory", "notifications", "reporting")
ACTIONS = (
    "freeze the public API until the audit is done",
    "move the nightly export to object storage",
    "drop the legacy XML endpoint",
    "add a canary stage before every release",
    "cap retries at three",
    "rotate the signing keys every ninety days",
    "split the read replica from the reporting queries",
    "require two reviewers for schema migrations",
    "batch the webhooks every five minutes",
    "serve thumbnails from the CDN",
)
SYMPTOMS = (
    "returned 502s for forty minutes after a bad deploy",
    "lost its queue consumer and fell six hours behind",
    "ran out of disk on the primary database",
    "served stale prices because the cache never expired",
    "timed out on every call to the payment provider",
)
CHATTER = (
    "{a}: Morning {b}, how was the weekend?",
    "{a}: Thanks {b}, talk soon!",
    "{a}: I tried the dairy-free menu at the canteen, not bad.",
    "{a}: Sounds good, let's pick this up in the follow-up.",
    "{a}: Coffee first, then the stand-up.",
    "{a}: Okay, got it.",
)
# services named with a hyphen, each with four facts (the identifier family's haystack)
SERVICES = (
    "vault-proxy",
    "tax-engine",
    "payments-gateway",
    "geo-router",
    "mail-relay",
    "rate-limiter",
)
FACTS = (
    (
        "language",
        "{s} is written in {v}.",
        "What language is {s} written in?",
        ("C#", "Go", "Rust", "Kotlin", "Elixir", "Java"),
    ),
    (
        "state",
        "{s} keeps its state in {v}.",
        "Where does {s} keep its state?",
        ("etcd", "Postgres", "a Valkey hash", "SQLite", "S3", "DynamoDB"),
    ),
    (
        "owner",
        "{s} is owned by the {v} team.",
        "Which team owns {s}?",
        ("platform", "payments", "core", "growth", "infra", "data"),
    ),
    (
        "port",
        "{s} listens on port {v}.",
        "Which port does {s} listen on?",
        ("8443", "7070", "9100", "6001", "5050", "8800"),
    ),
)
RECENT = ("We upgraded {s} last week.", "{s} deploys went smoothly this sprint.")
# not in the store: the unanswerable side of the same templates
ABSENT = ("ledger-cache", "fax-relay", "quote-engine", "audit-sink", "pdf-renderer", "sms-bridge")
OFF_TOPIC = (
    "What is our policy on parental leave?",
    "Which CDN do we use for video streaming?",
    "How do we train the recommendation model?",
    "Who is the landlord of the Berlin office?",
    "What did the auditors say about the ISO 27001 scope?",
    "Which GraphQL federation gateway routes our supergraph?",
    "How is the iOS app signed for TestFlight?",
    "What is the SLA with the cleaning company?",
    "Which Solidity compiler version do the smart contracts need?",
    "What is the boiling point of water at the top of Everest?",
    "How many legs does a spider have?",
    "Recommend a novel set in nineteenth-century Russia.",
)
# in the domain, without an identifier, and never said
NEVER_SAID = (
    "What did we decide about the mobile app's offline mode?",
    "Why did the warehouse robots stop on Friday?",
    "Who approved the marketing budget for the launch?",
    "How do we rotate the office Wi-Fi password?",
    "Which vendor prints the customer invoices on paper?",
    "What is the retention period for chat transcripts?",
)
_DECIDED = re.compile(r"^\w+: For the (\w+) service we decided to (.+)\.$")
_INCIDENT = re.compile(r"^Incident: the (\w+) service (.+); \w+ led the fix\.$")
IDENTIFIERS = (  # (memory, query)
    ("ERR-4312 means the signing key of the invoice API expired.", "what does ERR-4312 mean?"),
    ("ERR-4318 means the tax region is missing on the order.", "ERR-4318 again?"),
    (
        "Ticket PAY-1834: refunds above 500 euros fail with a rounding error.",
        "what is PAY-1834 about?",
    ),
    ("Ticket PAY-1892: the refund export misses weekend orders.", "status of PAY-1892"),
    ("Version v2.14.3 of the billing client fixes the retry storm.", "what changed in v2.14.3?"),
    ("Version v2.15.0 of the billing client drops Python 3.9.", "v2.15.0 release notes"),
    (
        "src/billing/retry.py holds the backoff policy for provider calls.",
        "what is in src/billing/retry.py?",
    ),
    ("src/billing/export.py writes the nightly ledger export.", "src/billing/export.py"),
)
ROLE_PAIRS = (
    ("{x} calls {y} over gRPC.", "{y} calls {x} over gRPC."),
    ("{x} depends on {y} for every order.", "{y} depends on {x} for every order."),
    ("{x} sends its events to {y}.", "{y} sends its events to {x}."),
)
ACTOR_PAIRS = (
    "{p} found a memory leak in {x}.",
    "{p} fixed the flaky integration test of {x}.",
    "{p} reviewed the schema migration of {x}.",
)
VALUE_PAIRS = (
    ("The {x} timeout is short on purpose.", "The {x} timeout is long on purpose."),
    ("{x} runs in the EU region.", "{x} runs in the US region."),
)
# (abandoned tool, its old recommendation, the replacement memory, the reason, question)
REPLACED = (
    (
        "Celery",
        "We use Celery for background jobs.",
        "We replaced Celery with arq for background jobs.",
        "Celery was dropped because its workers leaked memory under load.",
        "what do we use for background jobs?",
    ),
    (
        "Jenkins",
        "Jenkins runs our CI pipelines.",
        "We moved CI from Jenkins to GitHub Actions.",
        "Jenkins was abandoned because nobody could maintain its plugins.",
        "what runs our CI pipelines?",
    ),
    (
        "MongoDB",
        "We store orders in MongoDB.",
        "We migrated the orders store from MongoDB to Postgres.",
        "MongoDB was dropped because we needed transactions across collections.",
        "where do we store orders?",
    ),
    (
        "Webpack",
        "We bundle the dashboard with Webpack.",
        "We switched the dashboard bundler from Webpack to Vite.",
        "Webpack was given up because cold builds took four minutes.",
        "how do we bundle the dashboard?",
    ),
)


@dataclass(frozen=True)
class Event:
    uid: str
    kind: str  # decision | incident | release | chatter | fact | ident
    text: str
    at: float


@dataclass
class Corpus:
    events: list[Event] = field(default_factory=list)
    fact_of: dict[tuple[str, str], str] = field(default_factory=dict)  # (service, slot) -> uid
    ident_of: dict[str, str] = field(default_factory=dict)  # query -> uid

    @property
    def last(self) -> float:
        return max(e.at for e in self.events)


def _ts(day: date, minute: int) -> float:
    return datetime(day.year, day.month, day.day, 10, tzinfo=UTC).timestamp() + 60 * minute


def generate(seed: int) -> Corpus:
    rng = random.Random(f"gaps:{seed}")
    c = Corpus()

    def say(kind: str, text: str, day: date, minute: int) -> str:
        uid = f"{kind}-{len(c.events)}"
        c.events.append(Event(uid, kind, text, _ts(day, minute)))
        return uid

    for week in range(WEEKS):
        day = START + timedelta(weeks=week, days=rng.randrange(5))
        a, b = rng.sample(PEOPLE, 2)
        area = AREAS[week % len(AREAS)]
        for minute, template in enumerate(rng.sample(CHATTER, 2)):
            say("chatter", template.format(a=a, b=b), day, minute)
        kind = ("decision", "incident", "release")[week % 3]
        if kind == "decision":
            text = f"{a}: For the {area} service we decided to {rng.choice(ACTIONS)}."
        elif kind == "incident":
            text = f"Incident: the {area} service {rng.choice(SYMPTOMS)}; {a} led the fix."
        else:
            text = f"{a}: We shipped {area} {week // 10}.{week % 10}.0 to production."
        say(kind, text, day, 5)
    # service facts spread over the years, so recency alone cannot pick the right one
    for s_index, service in enumerate(SERVICES):
        for f_index, (slot, statement, _q, values) in enumerate(FACTS):
            day = START + timedelta(weeks=(s_index * 7 + f_index * 31) % WEEKS)
            value = values[(s_index + f_index) % len(values)]
            c.fact_of[(service, slot)] = say("fact", statement.format(s=service, v=value), day, 7)
        for extra in range(3):  # more memories that merely name the service
            day = START + timedelta(weeks=(s_index * 11 + extra * 17 + 3) % WEEKS)
            area = AREAS[extra]
            say("chatter", f"{PEOPLE[extra]}: The {service} dashboards look fine today.", day, 8)
            say("decision", f"We decided {service} sends {area} alerts to the on-call.", day, 9)
        end = START + timedelta(weeks=WEEKS)
        for back, text in enumerate(RECENT):  # fresh ones: recency favours them
            say("chatter", text.format(s=service), end - timedelta(days=3 + 9 * back), 12)
    for index, (text, question) in enumerate(IDENTIFIERS):
        day = START + timedelta(weeks=10 + index * 17)
        c.ident_of[question] = say("ident", text, day, 11)
    return c


@dataclass(frozen=True)
class DateQuestion:
    text: str
    start: date
    end: date  # exclusive
    kinds: tuple[str, ...]


def _months(year: int, month: int, count: int = 1) -> tuple[date, date]:
    end_month = month + count
    return date(year, month, 1), date(year + (end_month - 1) // 12, (end_month - 1) % 12 + 1, 1)


def date_questions(rng: random.Random) -> list[DateQuestion]:
    substantive = ("decision", "incident", "release")
    out: list[DateQuestion] = []
    for year in (2023, 2024, 2025):
        for month in rng.sample(range(1, 13), 5):
            name = date(year, month, 1).strftime("%B")
            start, end = _months(year, month)
            out.append(DateQuestion(f"What happened in {name} {year}?", start, end, substantive))
            out.append(
                DateQuestion(f"What did we decide in {name} {year}?", start, end, ("decision",))
            )
            out.append(DateQuestion(f"What happened in {name} of {year}?", start, end, substantive))
        out.append(
            DateQuestion(
                f"incidents in {year}", date(year, 1, 1), date(year + 1, 1, 1), ("incident",)
            )
        )
        for quarter in rng.sample(range(1, 5), 2):
            start, end = _months(year, 3 * quarter - 2, 3)
            out.append(
                DateQuestion(f"What did we ship in Q{quarter} {year}?", start, end, ("release",))
            )
        first = rng.randrange(1, 10)
        start, end = _months(year, first, 3)
        names = date(year, first, 1).strftime("%B"), date(year, first + 2, 1).strftime("%B")
        out.append(
            DateQuestion(
                f"What happened between {names[0]} and {names[1]} {year}?", start, end, substantive
            )
        )
    # relative to the clock (January 2026): "last March" is March 2025
    out.append(
        DateQuestion(
            "What did we decide last March?", date(2025, 3, 1), date(2025, 4, 1), ("decision",)
        )
    )
    out.append(
        DateQuestion("What happened last year?", date(2025, 1, 1), date(2026, 1, 1), substantive)
    )
    return out


def _epoch(d: date) -> float:
    return datetime(d.year, d.month, d.day, tzinfo=UTC).timestamp()


def _recall(engine: Engine, text: str, project: str = PROJECT, top_k: int = 5) -> RecallResult:
    return engine.recaller.recall(
        RecallRequest(text, projects=[project], top_k=top_k, actor="bench")
    )


def date_only(engine: Engine, c: Corpus, key_of: dict[str, str], seed: int) -> dict[str, Any]:
    by_key = {key_of[e.uid]: e for e in c.events}
    hits, inside, windows, chatter_first, chatter = 0, 0.0, 0, 0, 0.0
    questions = date_questions(random.Random(f"gaps-dates:{seed}"))
    for q in questions:
        found = _recall(engine, q.text)
        lo, hi = _epoch(q.start), _epoch(q.end)
        events = [by_key[h.memory.key] for h in found.hits if h.memory.key in by_key]
        hit = any(lo <= e.at < hi and e.kind in q.kinds for e in events)
        hits += hit
        if not hit and _VERBOSE:
            print(q.text, [(e.kind, e.text[:50], lo <= e.at < hi) for e in events])
        inside += sum(lo <= e.at < hi for e in events) / 5
        windows += getattr(found, "window", None) is not None
        chatter_first += bool(events) and events[0].kind == "chatter"
        chatter += sum(e.kind == "chatter" for e in events) / 5
    n = len(questions)
    return {
        "n": n,
        "hit@5": hits / n,
        "in_window@5": inside / n,
        "window_stated": windows / n,
        # small talk is 2 of a week's 3 turns: its share of the answers to a date-only question
        "small_talk@1": chatter_first / n,
        "small_talk@5": chatter / n,
    }


def _abstained(found: RecallResult) -> bool:
    return not found.hits or getattr(found, "confident", True) is False


def abstain(engine: Engine, c: Corpus, key_of: dict[str, str]) -> dict[str, Any]:
    answerable: list[tuple[str, set[str]]] = [
        (question.format(s=s), {key_of[c.fact_of[(s, slot)]]})
        for s in SERVICES
        for slot, _st, question, _v in FACTS
    ]
    answerable += _event_questions(c, key_of)
    unanswerable = [question.format(s=s) for s in ABSENT for _sl, _st, question, _v in FACTS]
    unanswerable += list(OFF_TOPIC) + list(NEVER_SAID)
    kept, refused_answerable = 0, 0
    for text, target in answerable:
        found = _recall(engine, text)
        refused_answerable += _abstained(found)
        kept += any(h.memory.key in target for h in found.hits)
    abstained = sum(_abstained(_recall(engine, text)) for text in unanswerable)
    return {
        "answerable": len(answerable),
        "unanswerable": len(unanswerable),
        "abstained_unanswerable": abstained / len(unanswerable),
        "abstained_answerable": refused_answerable / len(answerable),
        "answerable_target@5": kept / len(answerable),
    }


def _event_questions(c: Corpus, key_of: dict[str, str]) -> list[tuple[str, set[str]]]:
    """A question for every 5th decision and incident; its targets: the events saying the same."""
    asked: dict[str, set[str]] = {}
    for e in [e for e in c.events if e.kind in ("decision", "incident")][::5]:
        if (m := _DECIDED.match(e.text)) is not None:
            asked.setdefault(f"Did we decide to {m[2]} for the {m[1]} service?", set())
        elif (m := _INCIDENT.match(e.text)) is not None:
            asked.setdefault(f"When the {m[1]} service {m[2]}, what happened?", set())
    for question, targets in asked.items():
        for e in c.events:
            m = _DECIDED.match(e.text) or _INCIDENT.match(e.text)
            if m is not None and m[1] in question and m[2] in question:
                targets.add(key_of[e.uid])
    return list(asked.items())


def ident(engine: Engine, c: Corpus, key_of: dict[str, str]) -> dict[str, Any]:
    services = [
        (question.format(s=s), c.fact_of[(s, slot)])
        for s in SERVICES
        for slot, _st, question, _v in FACTS
    ]
    real = list(c.ident_of.items())
    out: dict[str, Any] = {}
    for name, cases in (("service_names", services), ("identifiers", real)):
        firsts = [_recall(engine, text).hits for text, _uid in cases]
        top = sum(
            bool(h) and h[0].memory.key == key_of[uid]
            for h, (_t, uid) in zip(firsts, cases, strict=True)
        )
        out[name] = {"n": len(cases), "hit@1": top / len(cases)}
    return out


def _remember(engine: Engine, text: str, project: str) -> str:
    return engine.memories.remember(Draft(text, project=project), actor="bench").status


def roles(engine: Engine) -> dict[str, Any]:
    pairs: list[tuple[str, str]] = []
    for index, (one, two) in enumerate(ROLE_PAIRS):
        for x, y in zip(SERVICES, SERVICES[index + 1 :] + SERVICES[: index + 1], strict=True):
            pairs.append((one.format(x=x, y=y), two.format(x=x, y=y)))
    for index, template in enumerate(ACTOR_PAIRS):
        for s_index, x in enumerate(SERVICES[:4]):
            p, q = PEOPLE[(index + s_index) % 8], PEOPLE[(index + s_index + 3) % 8]
            pairs.append((template.format(p=p, x=x), template.format(p=q, x=x)))
    for one, two in VALUE_PAIRS:
        for x in SERVICES[:4]:
            pairs.append((one.format(x=x), two.format(x=x)))
    refused, controls, kept_controls = 0, 0, 0
    for index, (first, second) in enumerate(pairs):
        project = f"roles{index}"
        assert _remember(engine, first, project) == "stored", first
        refused += _remember(engine, second, project) == "duplicate"
        repeat = "Note: " + first if index % 2 else first.rstrip(".") + " (confirmed again)."
        controls += 1
        kept_controls += _remember(engine, repeat, project) == "duplicate"
    return {
        "pairs": len(pairs),
        "false_refusals": refused,
        "false_refusal_rate": refused / len(pairs),
        "repeats": controls,
        "repeats_refused": kept_controls / controls,
    }


def replaced(engine: Engine, clock: ManualClock) -> dict[str, Any]:
    kept, hidden_old, notes = 0, 0, 0
    for index, (tool, old, new, reason, question) in enumerate(REPLACED):
        project = f"moved{index}"
        keys = {}
        for text in (old, new, reason):
            keys[text] = engine.memories.remember(Draft(text, project=project), actor="bench").key
            clock.advance(60)
        engine.experience.log_abandoned(
            Approach(name=tool, type="tool", reason="replaced"),
            effort=4,
            project=project,
            actor="bench",
        )
        clock.advance(60)
        found = _recall(engine, question, project)
        shown = {h.memory.key for h in found.hits}
        kept += keys[new] in shown
        kept += keys[reason] in _keys(_recall(engine, f"why did we drop {tool}?", project))
        hidden_old += keys[old] not in shown
        notes += any("replace" in n for n in found.notes)
    n = len(REPLACED)
    return {
        "n": n,
        "history_shown": kept / (2 * n),
        "old_hidden": hidden_old / n,
        "noted": notes / n,
    }


def _keys(found: RecallResult) -> set[str]:
    return {h.memory.key for h in found.hits}


def run(seed: int, base: Settings, only: set[str]) -> dict[str, Any]:
    c = generate(seed)
    embedder = load_embedder(base)
    with tempfile.TemporaryDirectory(prefix="kenning-gaps-") as tmp:
        settings = base.model_copy(
            update={
                "data_dir": Path(tmp),
                "valkey_port": free_port(),
                "key_prefix": "gp:",
                "valkey_url": None,
            }
        )
        with EmbeddedValkey(settings) as _server:
            client = connect(settings)
            clock = ManualClock(c.events[0].at)
            engine = Engine.open(settings, client, embedder, clock=clock)
            key_of: dict[str, str] = {}
            for e in sorted(c.events, key=lambda e: e.at):
                clock.value = e.at
                draft = Draft(e.text, project=PROJECT, namespace="episodic", event_date=e.at)
                key_of[e.uid] = engine.memories.remember(
                    draft, actor="bench", allow_duplicate=True
                ).key
            clock.value = _epoch(date(2026, 1, 12))
            families: dict[str, Callable[[], dict[str, Any]]] = {
                "date_only": lambda: date_only(engine, c, key_of, seed),
                "abstain": lambda: abstain(engine, c, key_of),
                "ident": lambda: ident(engine, c, key_of),
                "roles": lambda: roles(engine),
                "replaced": lambda: replaced(engine, clock),
            }
            out: dict[str, Any] = {
                "seed": seed,
                "memories": len(c.events),
                "engine": _module(client),
            }
            for name, measure in families.items():
                if not only or name in only:
                    out[name] = measure()
            engine.close()
            client.close()  # type: ignore[no-untyped-call]
    return out


def _module(client: Any) -> str:
    found = search_module.detect(client)
    return str(found) if found is not None else "none"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--only", default="", help="comma-separated families (default: all)")
    args = parser.parse_args()
    out = run(args.seed, Settings(_env_file=None), {f for f in args.only.split(",") if f})
    print(json.dumps(out, indent=2))
    if args.out:
        args.out.write_text(json.dumps(out, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
