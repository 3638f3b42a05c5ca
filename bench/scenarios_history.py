"""The scenario bank's history half: decisions with their reasons, bug fixes (symptom, cause,
fix), preferences and abandoned approaches. Pure data (``bench.scenarios`` joins the halves)."""

from __future__ import annotations

from bench.scenario import Scenario
from bench.scenario import scenario as _s

HISTORY: tuple[Scenario, ...] = (
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
