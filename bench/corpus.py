"""A seeded generator of a coding-agent memory corpus. Pure: the same seed and
size give the same corpus.

Every project carries one build, test and deploy note, a few style rules, dependency pins, API
quirks, decisions with reasons, bug fixes (symptom, cause, fix, error code), experience records with
abandoned approaches, and session notes as filler. Preferences are global. The same scenario appears
in many projects with different values: those twins are the cross-project distractors.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from bench.scenario import Scenario
from bench.scenarios import SCENARIOS

SIZES: dict[str, int] = {"1k": 1_000, "10k": 10_000, "100k": 100_000}
PER_PROJECT = 50
MIX: dict[str, int] = {
    "build": 1,
    "test": 1,
    "deploy": 1,
    "style": 3,
    "pin": 5,
    "quirk": 5,
    "decision": 5,
    "bug": 8,
    "experience": 3,
}
GLOBAL = "global"

_FIRST = (
    "atlas",
    "borealis",
    "cobalt",
    "delta",
    "ember",
    "fjord",
    "granite",
    "harbor",
    "indigo",
    "juniper",
    "kestrel",
    "lumen",
    "magnet",
    "nimbus",
    "onyx",
    "pylon",
    "quartz",
    "raven",
    "sierra",
    "tundra",
    "umber",
    "vertex",
    "willow",
    "xenon",
    "yarrow",
    "zephyr",
    "amber",
    "birch",
    "cedar",
    "dune",
    "echo",
    "falcon",
    "glacier",
    "heron",
    "iris",
    "jasper",
    "krypton",
    "lotus",
    "meridian",
    "nova",
    "orbit",
    "pepper",
    "quill",
    "rustic",
    "saffron",
)
_SECOND = (
    "api",
    "web",
    "ingest",
    "billing",
    "auth",
    "search",
    "mobile",
    "etl",
    "gateway",
    "ledger",
    "portal",
    "scheduler",
    "notifier",
    "crawler",
    "reports",
    "admin",
    "sync",
    "payments",
    "catalog",
    "checkout",
    "inventory",
    "metrics",
    "docs",
    "cli",
    "agent",
    "router",
    "vault",
    "stream",
    "forms",
    "media",
    "maps",
    "chat",
    "orders",
    "quotes",
    "import",
    "export",
    "risk",
    "pricing",
    "support",
    "tickets",
    "jobs",
    "mail",
    "feeds",
    "graph",
    "proxy",
)
_MODULES = (
    "billing",
    "ledger",
    "accounts",
    "invoices",
    "sessions",
    "uploads",
    "exports",
    "webhooks",
    "reports",
    "search",
    "catalog",
    "orders",
    "payouts",
    "audit",
    "notifications",
    "imports",
    "pricing",
    "shipping",
)
_VENDORS = (
    "Stripe",
    "Adyen",
    "Shopify",
    "Zendesk",
    "HubSpot",
    "Twilio",
    "SendGrid",
    "Mailjet",
    "Xero",
    "Salesforce",
    "Contentful",
    "Algolia",
    "Mollie",
    "Klarna",
    "DocuSign",
    "Intercom",
)
_BUILD = (
    "make build",
    "npm run build",
    "cargo build --release",
    "go build ./cmd/{service}",
    "mvn -q package -DskipTests",
    "python -m build",
    "bazel build //{service}:all",
    "gradle assemble",
    "pnpm -r build",
    "uv build",
)
_TEST = (
    "pytest -x -q",
    "npm test -- --runInBand",
    "go test ./... -race",
    "cargo nextest run",
    "mvn -q verify",
    "tox -e py311",
    "make check",
    "pnpm vitest run",
    "bundle exec rspec",
    "dotnet test",
)
_TEST_NOTES = (
    "The integration tests need Docker running.",
    "Set {env}_SKIP_SLOW=1 to skip the network tests.",
    "Snapshots live under tests/__snapshots__; update them with -u.",
    "Run `make db` first: the suite expects a migrated Postgres on port {port}.",
)
_DEPLOY = (
    "fly deploy --app {service}",
    "kubectl rollout restart deploy/{service}",
    "ansible-playbook deploy.yml",
    "helm upgrade {service} ./chart",
    "cap production deploy",
    "./scripts/release.sh {service}",
)
_FILLER = (
    "Session {date}: refactored `{module}/{file}.py`; {n} tests added, nothing pending.",
    "Paired with {person} on the {module} importer; the next step is the retry path.",
    "Reviewed PR #{n} in {module}: asked for smaller functions and a test for the empty case.",
    "Meeting note {date}: the {module} milestone moved to {month}; scope unchanged.",
    "Benchmarked {module} serialisation: {n} ms p95 after switching the encoder.",
    "Reminder: the {vendor} sandbox credentials expire on {date}; renew them in the vendor portal.",
    "Spike {date}: looked at replacing the {module} CSV parser; kept the current one for now.",
    "Onboarding note: {person} owns {module}; ask them before touching `{file}.py`.",
    "Cleaned up {n} unused feature flags in {module} on {date}.",
    "Left a TODO in `{module}/{file}.py` about the pagination edge case (empty last page).",
)
_PEOPLE = (
    "Ana",
    "Bo",
    "Chidi",
    "Dana",
    "Emeka",
    "Fatima",
    "Goran",
    "Hana",
    "Ivo",
    "Jun",
    "Kai",
    "Lena",
)
_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
)


@dataclass(frozen=True)
class Item:
    """One memory of the corpus, with the ground truth the query families need."""

    uid: str
    project: str
    namespace: str
    content: str
    scenario: str | None = None
    ident: str | None = None  # the exact identifier this memory carries, if any
    tags: tuple[str, ...] = ()
    kind: str = "memory"


@dataclass
class Corpus:
    seed: int
    size: str
    items: list[Item] = field(default_factory=list)

    def by_scenario(self) -> dict[str, list[Item]]:
        out: dict[str, list[Item]] = {}
        for item in self.items:
            if item.scenario is not None:
                out.setdefault(item.scenario, []).append(item)
        return out

    def projects(self) -> list[str]:
        return sorted({i.project for i in self.items if i.project != GLOBAL})


def project_names(count: int) -> list[str]:
    names = [f"{a}-{b}" for b in _SECOND for a in _FIRST]
    if count > len(names):
        names += [f"{n}-v2" for n in names]
    return names[:count]


def slots(rng: random.Random, project: str) -> dict[str, str]:
    """Per-project values for the scenario templates."""
    service = project.split("-", maxsplit=1)[0] + "-" + rng.choice(("svc", "worker", "api", "app"))
    values = {
        "service": service,
        "module": rng.choice(_MODULES),
        "vendor": rng.choice(_VENDORS),
        "branch": rng.choice(("main", "trunk", "release", "production")),
        "ci": rng.choice(("GitHub Actions", "GitLab", "Buildkite", "Jenkins", "Drone")),
        "region": rng.choice(
            ("eu-west-1", "eu-central-1", "us-east-1", "ap-southeast-2", "fra1", "ams3")
        ),
        "out_dir": rng.choice(("dist/", "build/", "target/release/", "out/", "bin/")),
        "linelen": str(rng.choice((88, 100, 110, 120))),
        "env": project.split("-", maxsplit=1)[0].upper(),
        "port": str(rng.randint(5400, 5499)),
        "numpy_ver": f"1.{rng.randint(21, 26)}.{rng.randint(0, 4)}",
        "pyd_ver": f"1.10.{rng.randint(2, 18)}",
        "pyd_next": "2",
        "node_ver": (f"{rng.choice((16, 18, 20))}.{rng.randint(0, 19)}.{rng.randint(0, 9)}"),
        "pkg": rng.choice(
            ("sharp", "node-sass", "canvas", "bcrypt", "@acme/design-system", "sqlite3")
        ),
        "crypto_ver": f"{rng.randint(36, 41)}.0.{rng.randint(0, 8)}",
        "react_ver": f"18.{rng.randint(0, 3)}.{rng.randint(0, 1)}",
        "sqla_ver": f"1.4.{rng.randint(30, 52)}",
        "go_ver": f"1.{rng.randint(19, 22)}.{rng.randint(0, 9)}",
        "pkg_mgr": rng.choice(("npm", "poetry", "pip-compile", "cargo", "bundle")),
        "pkg_ver": f"{rng.randint(0, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 20)}",
        "pg_ver": f"{rng.randint(12, 16)}.{rng.randint(1, 9)}",
        "py_ver": f"3.{rng.randint(9, 12)}",
        "rate": str(rng.choice((60, 100, 120, 300, 600))),
        "bucket": f"{project}-{rng.choice(('assets', 'exports'))}",
        "ttl": str(rng.choice((30, 60, 300, 900))),
        "batch": str(rng.choice((50, 100, 500, 1000))),
        "queue": rng.choice(("RQ on Valkey", "SQS", "RabbitMQ", "Postgres SKIP LOCKED")),
        "table": rng.choice(("orders", "accounts", "invoices", "feature_flags", "payouts", "jobs")),
        "retries": str(rng.randint(2, 6)),
        "secs": str(rng.randint(8, 90)),
        "pool": f"max {rng.randint(5, 40)}",
        "days": str(rng.randint(2, 21)),
        "deploy_target": rng.choice(("a single VM", "ECS", "Fly.io", "Heroku")),
        "ticket": f"{project.split('-', maxsplit=1)[0][:3].upper()}-{rng.randint(100, 9999)}",
    }
    values["build_cmd"] = rng.choice(_BUILD).format(service=service)
    values["test_cmd"] = rng.choice(_TEST)
    values["test_note"] = rng.choice(_TEST_NOTES).format(**values)
    values["deploy_cmd"] = rng.choice(_DEPLOY).format(service=service)
    return values


def render(scenario: Scenario, values: dict[str, str]) -> str:
    return scenario.text.format(**values)


class _Codes:
    """Unique error codes across the corpus (the lexical family needs each to name one memory)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.seen: set[str] = set()

    def new(self, project: str) -> str:
        while True:
            first, second = project.split("-")[:2]
            code = f"{first[:2].upper()}{second[:1].upper()}-{self.rng.randint(1000, 99999)}"
            if code not in self.seen:
                self.seen.add(code)
                return code


def _project_items(
    rng: random.Random, project: str, codes: _Codes, per_project: int
) -> Iterator[Item]:
    groups: dict[str, list[Scenario]] = {}
    for s in SCENARIOS:
        groups.setdefault(s.group, []).append(s)
    values = slots(rng, project)
    count = 0
    for group, wanted in MIX.items():
        for scenario in rng.sample(groups[group], wanted):
            local = dict(values, code=codes.new(project))
            ident = local[scenario.ident] if scenario.ident else None
            kind = "experience" if scenario.group == "experience" else "memory"
            yield Item(
                f"{project}/{scenario.id}",
                project,
                scenario.namespace,
                render(scenario, local),
                scenario.id,
                ident,
                scenario.tags,
                kind,
            )
            count += 1
    for n in range(per_project - count):
        yield Item(f"{project}/note-{n}", project, "episodic", filler(rng, values))


def filler(rng: random.Random, values: dict[str, str]) -> str:
    template = rng.choice(_FILLER)
    return template.format(
        date=f"2026-{rng.randint(1, 9):02d}-{rng.randint(1, 28):02d}",
        module=rng.choice(_MODULES),
        file=rng.choice(("client", "models", "views", "tasks", "schema", "parser", "service")),
        n=rng.randint(2, 400),
        person=rng.choice(_PEOPLE),
        month=rng.choice(_MONTHS),
        vendor=values["vendor"],
    )


def generate(size: str, seed: int = 7) -> Corpus:
    """The corpus of ``size`` ('1k', '10k', '100k') for ``seed``:
    deterministic, exactly that many items."""
    if size not in SIZES:
        raise ValueError(f"unknown corpus size {size!r}; use one of {', '.join(SIZES)}")
    total = SIZES[size]
    rng = random.Random(f"kenning-bench:{seed}:{size}")
    prefs = [s for s in SCENARIOS if s.group == "pref"]
    corpus = Corpus(seed=seed, size=size)
    corpus.items += [Item(f"{GLOBAL}/{s.id}", GLOBAL, s.namespace, s.text, s.id) for s in prefs]
    codes = _Codes(rng)
    budget = total - len(corpus.items)
    for project in project_names(budget // PER_PROJECT):
        corpus.items += list(_project_items(rng, project, codes, PER_PROJECT))
    last = corpus.projects()[-1]
    extra = total - len(corpus.items)
    corpus.items += [
        Item(f"{last}/extra-{n}", last, "episodic", filler(rng, slots(rng, last)))
        for n in range(extra)
    ]
    return corpus
