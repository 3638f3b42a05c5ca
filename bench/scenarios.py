"""The scenario bank of the synthetic corpus: what coding agents remember, in
our own words. Pure data.

Each scenario is a memory template with ``{slot}`` placeholders (filled per project by
``bench.corpus``) and hand-written paraphrase questions that ask for the same fact in different
vocabulary -- not word swaps of the memory. ``ident`` names the slot that holds an exact identifier
(error code, package pin, variable name) for the lexical family.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Scenario:
    id: str
    group: str  # how many of a group a project carries is set in corpus.MIX
    namespace: str
    text: str
    paraphrases: tuple[str, ...]
    ident: str | None = None
    tags: tuple[str, ...] = ()


def _s(
    id_: str,
    group: str,
    namespace: str,
    text: str,
    *paraphrases: str,
    ident: str | None = None,
    tags: tuple[str, ...] = (),
) -> Scenario:
    return Scenario(id_, group, namespace, text, tuple(paraphrases), ident, tags)


SCENARIOS: tuple[Scenario, ...] = (
    # --- build, test, deploy: one each per project ------------------------------------------------
    _s(
        "build",
        "build",
        "project",
        "Build with `{build_cmd}`; artefacts land in `{out_dir}` and CI caches that folder.",
        "How do I compile this thing, and where does the output end up?",
        "Which command produces the release bundle?",
        tags=("build",),
    ),
    _s(
        "test",
        "test",
        "project",
        "Run the test suite with `{test_cmd}`. {test_note}",
        "What do I type to check nothing is broken before pushing?",
        "How are the automated checks executed on a laptop?",
        tags=("testing",),
    ),
    _s(
        "deploy",
        "deploy",
        "project",
        "Deploy: merge to `{branch}`, wait for the {ci} pipeline, then `{deploy_cmd}`; "
        "production lives in {region}.",
        "How does a change get shipped to production?",
        "Walk me through a release of this service.",
        tags=("deploy",),
    ),
    # --- style rules ------------------------------------------------------------------------------
    _s(
        "style-fstrings",
        "style",
        "project",
        "Style: use f-strings for formatting, never `%` or `.format()`.",
        "What is the house rule for building strings with variables in them?",
    ),
    _s(
        "style-linelen",
        "style",
        "project",
        "Style: lines stay under {linelen} characters; the linter enforces it.",
        "How wide may a line of source code be here?",
    ),
    _s(
        "style-errors",
        "style",
        "project",
        "Style: raise the typed errors from `{module}/errors.py`; never raise bare Exception "
        "or return None on failure.",
        "How should a function signal that something went wrong?",
    ),
    _s(
        "style-imports",
        "style",
        "project",
        "Style: absolute imports only, grouped stdlib / third-party / local.",
        "Are relative imports allowed, and how are import blocks ordered?",
    ),
    _s(
        "style-tests",
        "style",
        "project",
        "Style: every test asserts unconditionally and names the behaviour, e.g. "
        "`test_refuses_expired_token`.",
        "What naming convention do the test functions follow?",
    ),
    _s(
        "style-logging",
        "style",
        "project",
        "Style: log with `logger = logging.getLogger(__name__)` and %-style "
        "arguments, never print().",
        "How should diagnostic output be emitted from library code?",
    ),
    _s(
        "style-commits",
        "style",
        "project",
        "Style: commit messages in the imperative, under 72 characters, with the "
        "ticket id like `{ticket}`.",
        "How should I word the summary line when I record my changes in git?",
        ident="ticket",
    ),
    _s(
        "style-types",
        "style",
        "project",
        "Style: full type hints; mypy runs in strict mode and CI fails on any error.",
        "How strict is the static checking of annotations?",
    ),
    _s(
        "style-docstrings",
        "style",
        "project",
        "Style: docstrings state the contract (inputs, outputs, errors), not the steps.",
        "What belongs in the comment block at the top of a function?",
    ),
    _s(
        "style-naming",
        "style",
        "project",
        "Style: modules are nouns (`billing.py`, `ledger.py`); no utils.py or helpers.py.",
        "What should I call a new source file, and which names are banned?",
    ),
    # --- dependency pins --------------------------------------------------------------------------
    _s(
        "pin-numpy",
        "pin",
        "knowledge",
        "Pin `numpy=={numpy_ver}`: the 2.x ABI breaks the compiled extension in `{module}`.",
        "Can we move the array maths library to its newest major release?",
        ident="numpy_ver",
        tags=("deps",),
    ),
    _s(
        "pin-pydantic",
        "pin",
        "knowledge",
        "Pin `pydantic=={pyd_ver}` until the settings classes are ported; "
        "v{pyd_next} validators differ.",
        "Why is the data-validation library held back?",
        ident="pyd_ver",
        tags=("deps",),
    ),
    _s(
        "pin-node",
        "pin",
        "knowledge",
        "Node is pinned to {node_ver} in `.nvmrc`; newer releases break the `{pkg}` postinstall.",
        "Which JavaScript runtime version do we need, and why that one?",
        ident="node_ver",
        tags=("deps",),
    ),
    _s(
        "pin-openssl",
        "pin",
        "knowledge",
        "Keep `cryptography=={crypto_ver}`: the next release drops the OpenSSL 1.1 the "
        "{region} hosts still run.",
        "Why can't the crypto package be upgraded on the servers?",
        ident="crypto_ver",
        tags=("deps",),
    ),
    _s(
        "pin-react",
        "pin",
        "knowledge",
        "React stays on {react_ver}; the design-system package `{pkg}` has no support for 19 yet.",
        "What holds the front-end UI framework back from the latest major?",
        ident="react_ver",
        tags=("deps",),
    ),
    _s(
        "pin-sqlalchemy",
        "pin",
        "knowledge",
        "Pin `sqlalchemy=={sqla_ver}`: 2.0-style sessions would need the `{module}` "
        "repository layer rewritten.",
        "Why haven't we moved to the new ORM session API?",
        ident="sqla_ver",
        tags=("deps",),
    ),
    _s(
        "pin-go",
        "pin",
        "knowledge",
        "Go toolchain pinned at {go_ver} in go.mod; the linter image does not ship newer yet.",
        "Which compiler release does the backend build with, and what blocks bumping it?",
        ident="go_ver",
        tags=("deps",),
    ),
    _s(
        "pin-lockfile",
        "pin",
        "knowledge",
        "Never run `{pkg_mgr} update` blindly: the lockfile pins `{pkg}` "
        "to {pkg_ver} for a reason.",
        "Is it fine to refresh all third-party packages at once?",
        ident="pkg_ver",
        tags=("deps",),
    ),
    _s(
        "pin-postgres",
        "pin",
        "knowledge",
        "Postgres is {pg_ver} everywhere; local docker-compose must match or migrations drift.",
        "Which database server version should my local container run?",
        ident="pg_ver",
        tags=("deps",),
    ),
    _s(
        "pin-python",
        "pin",
        "knowledge",
        "Python {py_ver} only: a dependency of `{module}` ships no wheels for newer interpreters.",
        "What interpreter version must the virtualenv use?",
        ident="py_ver",
        tags=("deps",),
    ),
    # --- API quirks -------------------------------------------------------------------------------
    _s(
        "quirk-webhook",
        "quirk",
        "knowledge",
        "Payment webhooks: verify the signature against the raw request bytes; "
        "re-serialised JSON never matches.",
        "The billing provider's callbacks keep failing validation. What's the catch?",
        tags=("api",),
    ),
    _s(
        "quirk-pagination",
        "quirk",
        "knowledge",
        "The {vendor} API paginates with an opaque `next_cursor`; page numbers "
        "silently repeat the first page.",
        "Fetching results page by page from the vendor returns the same "
        "items; how do I walk the list?",
        tags=("api",),
    ),
    _s(
        "quirk-ratelimit",
        "quirk",
        "knowledge",
        "{vendor} rate limits at {rate} requests/min per token and answers 429 "
        "with Retry-After in seconds.",
        "How fast may we call the partner service before it pushes back?",
        tags=("api",),
    ),
    _s(
        "quirk-timezone",
        "quirk",
        "knowledge",
        "The {vendor} reports endpoint returns timestamps in local time without an offset; "
        "treat them as Europe/Berlin.",
        "Dates from the partner's reporting feed look shifted by an hour or two. Why?",
        tags=("api",),
    ),
    _s(
        "quirk-s3",
        "quirk",
        "knowledge",
        "Object storage: list calls are eventually consistent after a delete in "
        "`{bucket}`; re-check with HEAD.",
        "A file I removed from the bucket still shows up in listings for "
        "a while. Is that expected?",
        tags=("api",),
    ),
    _s(
        "quirk-grpc",
        "quirk",
        "knowledge",
        "The `{service}` gRPC client needs a deadline on every call; without one a dead peer "
        "hangs the worker forever.",
        "Our worker froze forever waiting on an RPC to another service. What must every call set?",
        tags=("api",),
    ),
    _s(
        "quirk-utf8",
        "quirk",
        "knowledge",
        "The legacy CSV export from {vendor} is cp1252, not UTF-8; decode explicitly or "
        "names with umlauts break.",
        "Accented customer names come out garbled when we import the old spreadsheet dump. Why?",
        tags=("api",),
    ),
    _s(
        "quirk-idempotency",
        "quirk",
        "knowledge",
        "POST /orders on the {vendor} API needs an Idempotency-Key header or "
        "retries create duplicate orders.",
        "Retrying a failed purchase request sometimes charges the customer "
        "twice. How do we prevent that?",
        tags=("api",),
    ),
    _s(
        "quirk-oauth",
        "quirk",
        "knowledge",
        "{vendor} refresh tokens rotate on every use; store the new one immediately or the "
        "session dies after an hour.",
        "Users of the integration get logged out after about sixty "
        "minutes. What are we doing wrong?",
        tags=("api",),
    ),
    _s(
        "quirk-float",
        "quirk",
        "knowledge",
        "Money from the {vendor} API arrives as a float in major units; convert with "
        "Decimal(str(x)) before summing.",
        "Invoice totals are off by a cent now and then. Where do the rounding errors come from?",
        tags=("api",),
    ),
    _s(
        "quirk-redirect",
        "quirk",
        "knowledge",
        "The {vendor} download URLs 302 to a signed link valid for {ttl} seconds; fetch "
        "right away, never cache it.",
        "Saved links to partner files stop working shortly after we store them. Why?",
        tags=("api",),
    ),
    _s(
        "quirk-batch",
        "quirk",
        "knowledge",
        "The {vendor} bulk endpoint accepts at most {batch} items and rejects the whole "
        "batch if one item is invalid.",
        "A large upload to the partner was refused entirely because of one bad "
        "record. What are the limits?",
        tags=("api",),
    ),
    # --- decisions with reasons -------------------------------------------------------------------
    _s(
        "dec-queue",
        "decision",
        "project",
        "Decision: use {queue} instead of Kafka for background jobs; the volume is small and "
        "ops wanted one less cluster.",
        "Why didn't we adopt a distributed log for the async work?",
        tags=("decision",),
    ),
    _s(
        "dec-monorepo",
        "decision",
        "project",
        "Decision: keep `{service}` in the monorepo; a separate repo doubled "
        "release coordination work.",
        "Why isn't that component in its own repository?",
        tags=("decision",),
    ),
    _s(
        "dec-orm",
        "decision",
        "project",
        "Decision: raw SQL in `{module}/queries.sql` for reporting; the ORM produced N+1 "
        "queries we could not tame.",
        "Why do the analytics screens bypass the object mapper?",
        tags=("decision",),
    ),
    _s(
        "dec-auth",
        "decision",
        "project",
        "Decision: session cookies, not JWTs, for the web app; we need "
        "server-side revocation on logout.",
        "Why don't we hand signed tokens to the browser?",
        tags=("decision",),
    ),
    _s(
        "dec-ssr",
        "decision",
        "project",
        "Decision: server-rendered templates with htmx instead of a SPA; no "
        "JS build step to maintain.",
        "Why is there no single-page front-end framework?",
        tags=("decision",),
    ),
    _s(
        "dec-cache",
        "decision",
        "project",
        "Decision: no response cache in front of `{service}`; stale permissions were "
        "served after role changes.",
        "Why was the HTTP caching layer taken out?",
        tags=("decision",),
    ),
    _s(
        "dec-uuid",
        "decision",
        "project",
        "Decision: ULIDs as primary keys so ids sort by creation time; UUIDv4 "
        "scattered the index pages.",
        "Why are record identifiers time-ordered strings?",
        tags=("decision",),
    ),
    _s(
        "dec-retry",
        "decision",
        "project",
        "Decision: at most {retries} retries with jittered backoff on outbound calls; "
        "unbounded retries caused a storm.",
        "How many times do we repeat a failed request to a dependency, and why not more?",
        tags=("decision",),
    ),
    _s(
        "dec-flags",
        "decision",
        "project",
        "Decision: feature flags live in the database table `{table}`, not env vars, so "
        "support can flip them live.",
        "Where are toggles for unfinished features stored, and why there?",
        tags=("decision",),
    ),
    _s(
        "dec-migrations",
        "decision",
        "project",
        "Decision: migrations are forward-only; a rollback ships as a new "
        "migration, never as a down script.",
        "How do we undo a schema change that went wrong?",
        tags=("decision",),
    ),
    _s(
        "dec-logs",
        "decision",
        "project",
        "Decision: structured JSON logs to stdout; the {ci} agent ships them, the "
        "app never writes log files.",
        "Where does the service put its log output?",
        tags=("decision",),
    ),
    _s(
        "dec-tz",
        "decision",
        "project",
        "Decision: store every timestamp in UTC; convert only in the UI layer.",
        "Which timezone do the database columns use?",
        tags=("decision",),
    ),
    # --- bug fixes: symptom, cause, fix -----------------------------------------------------------
    _s(
        "bug-pool",
        "bug",
        "episodic",
        "Bug {code}: login hung for {secs} s under load. Cause: the DB pool ({pool}) was drained "
        "by long reports. Fix: a separate pool for reporting.",
        "Why did signing in freeze when traffic spiked?",
        ident="code",
        tags=("bug",),
    ),
    _s(
        "bug-memleak",
        "bug",
        "episodic",
        "Bug {code}: the `{service}` worker's memory grew until OOM-killed. Cause: an lru_cache "
        "on a method kept every instance alive. Fix: module-level cache keyed by id.",
        "What made the background process balloon until the kernel killed it?",
        ident="code",
        tags=("bug",),
    ),
    _s(
        "bug-timezone",
        "bug",
        "episodic",
        "Bug {code}: nightly invoices were dated the previous day. Cause: naive datetime.now() "
        "on a UTC host. Fix: timezone-aware datetimes everywhere.",
        "Why did bills carry yesterday's date?",
        ident="code",
        tags=("bug",),
    ),
    _s(
        "bug-flaky",
        "bug",
        "episodic",
        "Bug {code}: `test_{module}_sync` failed one run in ten. Cause: it depended on dict "
        "order from a set. Fix: sort before comparing.",
        "Why was one of the unit checks passing and failing at random?",
        ident="code",
        tags=("bug",),
    ),
    _s(
        "bug-encoding",
        "bug",
        "episodic",
        "Bug {code}: uploads with emoji in the filename returned 500. Cause: latin-1 header "
        "encoding in the upload handler. Fix: RFC 5987 filename*.",
        "Why did attaching some files crash the server?",
        ident="code",
        tags=("bug",),
    ),
    _s(
        "bug-deadlock",
        "bug",
        "episodic",
        "Bug {code}: two jobs deadlocked on `{table}`. Cause: they locked rows in opposite order. "
        "Fix: always lock by ascending id.",
        "Why did the scheduled tasks block each other forever?",
        ident="code",
        tags=("bug",),
    ),
    _s(
        "bug-cors",
        "bug",
        "episodic",
        "Bug {code}: the dashboard could not call the API from staging. Cause: the CORS "
        "allowlist missed the staging origin. Fix: origins come from config per environment.",
        "Why were browser requests from the test environment rejected?",
        ident="code",
        tags=("bug",),
    ),
    _s(
        "bug-n1",
        "bug",
        "episodic",
        "Bug {code}: the orders page took {secs} s. Cause: one query per line item (N+1). "
        "Fix: prefetch items in one query.",
        "Why was the purchases screen so slow to load?",
        ident="code",
        tags=("bug",),
    ),
    _s(
        "bug-cache",
        "bug",
        "episodic",
        "Bug {code}: users saw someone else's avatar. Cause: the CDN cached a response that "
        "carried a cookie. Fix: Cache-Control private on personalised pages.",
        "Why did people see another person's profile picture?",
        ident="code",
        tags=("bug",),
    ),
    _s(
        "bug-disk",
        "bug",
        "episodic",
        "Bug {code}: `{service}` stopped writing at 3am. Cause: the disk filled with rotated "
        "logs nobody deleted. Fix: logrotate keeps {retries} files.",
        "Why did the service stop persisting data in the middle of the night?",
        ident="code",
        tags=("bug",),
    ),
    _s(
        "bug-float",
        "bug",
        "episodic",
        "Bug {code}: discount totals were off by 0.01. Cause: float arithmetic on prices. "
        "Fix: integer cents end to end.",
        "Why were the reduced prices a penny wrong?",
        ident="code",
        tags=("bug",),
    ),
    _s(
        "bug-race",
        "bug",
        "episodic",
        "Bug {code}: duplicate welcome emails. Cause: two workers picked the same job without a "
        "lock. Fix: SET NX lock per job id.",
        "Why did new customers get the greeting mail twice?",
        ident="code",
        tags=("bug",),
    ),
    _s(
        "bug-dns",
        "bug",
        "episodic",
        "Bug {code}: outbound calls failed for minutes after a failover. Cause: the JVM cached "
        "DNS forever. Fix: networkaddress.cache.ttl={ttl}.",
        "Why couldn't we reach the partner right after they switched servers?",
        ident="code",
        tags=("bug",),
    ),
    _s(
        "bug-migration",
        "bug",
        "episodic",
        "Bug {code}: a migration locked `{table}` for {secs} s in production. Cause: adding a "
        "column with a default rewrote the table. Fix: add nullable, backfill in batches.",
        "Why did the schema change freeze the live site?",
        ident="code",
        tags=("bug",),
    ),
    _s(
        "bug-sigterm",
        "bug",
        "episodic",
        "Bug {code}: in-flight requests were dropped on every deploy. Cause: the server ignored "
        "SIGTERM and was killed. Fix: graceful shutdown with a {secs} s drain.",
        "Why did users get errors each time we rolled out a new version?",
        ident="code",
        tags=("bug",),
    ),
    _s(
        "bug-regex",
        "bug",
        "episodic",
        "Bug {code}: a CPU spike from email validation. Cause: catastrophic backtracking in the "
        "regex. Fix: a linear-time pattern plus a length cap.",
        "What pegged the processor when people typed addresses?",
        ident="code",
        tags=("bug",),
    ),
    # --- preferences (global) ---------------------------------------------------------------------
    _s(
        "pref-concise",
        "pref",
        "preference",
        "The user wants short answers: the change first, the explanation after.",
        "How long should my replies to this person be?",
    ),
    _s(
        "pref-tests-first",
        "pref",
        "preference",
        "The user prefers a failing test before the fix in every bug PR.",
        "In what order should I present a correction for a defect?",
    ),
    _s(
        "pref-no-emoji",
        "pref",
        "preference",
        "No emoji in commits, comments or docs, ever.",
        "May I decorate messages with little pictograms?",
    ),
    _s(
        "pref-british",
        "pref",
        "preference",
        "Write British English in docs (colour, behaviour, licence).",
        "Which spelling variant should documentation use?",
    ),
    _s(
        "pref-small-prs",
        "pref",
        "preference",
        "The user likes pull requests under 300 changed lines; split bigger work.",
        "How big should a change set be before I break it up?",
    ),
    _s(
        "pref-ask",
        "pref",
        "preference",
        "Ask before adding a new third-party dependency; the user reviews licences.",
        "Can I pull in an external library without checking first?",
    ),
    # --- experience: abandoned approaches ---------------------------------------------------------
    _s(
        "exp-celery",
        "experience",
        "episodic",
        "Tried Celery beat for the {module} schedules; abandoned after {days} days: tasks "
        "silently vanished on restarts. Went with a cron-driven worker.",
        "Have we attempted the Python task-queue scheduler before?",
        tags=("experience", "abandoned"),
    ),
    _s(
        "exp-graphql",
        "experience",
        "episodic",
        "Tried a GraphQL layer over `{service}`; abandoned after {days} days: the N+1 resolvers "
        "were slower than REST. Kept REST with sparse fieldsets.",
        "Did a query-language API for the backend ever get built?",
        tags=("experience", "abandoned"),
    ),
    _s(
        "exp-k8s",
        "experience",
        "episodic",
        "Tried moving `{service}` to Kubernetes; abandoned after {days} days: the ops cost "
        "outweighed the gain for three containers. Stayed on {deploy_target}.",
        "Was container orchestration for this service ever evaluated?",
        tags=("experience", "abandoned"),
    ),
    _s(
        "exp-mongo",
        "experience",
        "episodic",
        "Tried MongoDB for the {module} events; abandoned after {days} days: the reports needed "
        "joins. Moved back to Postgres JSONB.",
        "Did we ever put the event data in a document database?",
        tags=("experience", "abandoned"),
    ),
    _s(
        "exp-microfe",
        "experience",
        "episodic",
        "Tried micro-frontends for the admin UI; abandoned after {days} days: shared state "
        "across bundles was a mess. One app with lazy routes instead.",
        "Was splitting the admin web UI into independently deployed pieces tried?",
        tags=("experience", "abandoned"),
    ),
    _s(
        "exp-orm-cache",
        "experience",
        "episodic",
        "Tried a second-level ORM cache for `{module}`; abandoned after {days} days: "
        "invalidation bugs served stale prices. Indexes fixed the speed instead.",
        "Did anyone try caching database entities inside the mapper?",
        tags=("experience", "abandoned"),
    ),
)
