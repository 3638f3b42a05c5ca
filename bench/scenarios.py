"""The scenario bank of the synthetic corpus: what coding agents remember, in
our own words. Pure data.

Each scenario is a memory template with ``{slot}`` placeholders (filled per project by
``bench.corpus``) and hand-written paraphrase questions that ask for the same fact in different
vocabulary -- not word swaps of the memory. ``ident`` names the slot that holds an exact identifier
(error code, package pin, variable name) for the lexical family.
"""

from __future__ import annotations

from bench.scenario import Scenario
from bench.scenario import scenario as _s
from bench.scenarios_history import HISTORY

WORKFLOW: tuple[Scenario, ...] = (
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
)

SCENARIOS: tuple[Scenario, ...] = WORKFLOW + HISTORY
