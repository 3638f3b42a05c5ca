"""The LLM extras' settings (optional; docs/llm.md): the Anthropic client, the daily caps, the
enrichment queue and query expansion. Part of ``kenning.core.settings.Settings``."""

from __future__ import annotations

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings


class LLMSettings(BaseSettings):
    """The ``KENNING_`` settings of the LLM extras (read through ``Settings``)."""

    anthropic_api_key: SecretStr | None = Field(
        default=None,
        description=(
            "Anthropic API key; unset = the LLM extras are off and every path is heuristic."
        ),
    )
    anthropic_base_url: str | None = Field(
        default=None,
        description=(
            "Anthropic API base URL; unset = the public API (tests point it at a local server)."
        ),
    )
    llm_model: str = Field(default="claude-haiku-4-5", description="Model the LLM extras call.")
    llm_timeout_seconds: float = Field(
        default=30.0, gt=0, le=600, description="Timeout of one LLM request."
    )
    llm_max_retries: int = Field(
        default=3,
        ge=0,
        le=10,
        description="Retries on 429/5xx/timeouts (honouring Retry-After, capped at 30 s).",
    )
    llm_daily_token_cap: int = Field(
        default=2_000_000,
        ge=0,
        description="Tokens (input + output) the extras may spend per UTC day in all.",
    )
    llm_project_daily_token_cap: int = Field(
        default=0,
        ge=0,
        description="Tokens one project may spend per UTC day; 0 = only the overall cap.",
    )
    llm_extract_facts: bool = Field(
        default=True,
        description="With a key: queue fact extraction for each new memory (episodic, knowledge).",
    )
    llm_contradiction_verdicts: bool = Field(
        default=True,
        description="With a key: ask for a second-tier verdict on each contradiction opened.",
    )
    enrichment_visibility_seconds: float = Field(
        default=300.0,
        gt=0,
        le=86_400,
        description=(
            "A claimed enrichment job not finished in this time is retried by another worker."
        ),
    )
    enrichment_max_attempts: int = Field(
        default=3,
        ge=1,
        le=20,
        description="Attempts before an enrichment job is parked with its error.",
    )
    enrichment_retry_seconds: float = Field(
        default=60.0,
        gt=0,
        le=86_400,
        description=(
            "An enrichment job the LLM could not take (outage, over budget) waits this long, "
            "doubling with each retry up to KENNING_ENRICHMENT_RETRY_MAX_SECONDS; it is not parked."
        ),
    )
    enrichment_retry_max_seconds: float = Field(
        default=3600.0,
        gt=0,
        le=7 * 86_400,
        description="The ceiling of an enrichment job's wait between retries after an outage.",
    )
    llm_verdict_deadline_seconds: float = Field(
        default=30.0,
        gt=0,
        le=600,
        description=(
            "The one wall-clock bound on a queued second-tier contradiction verdict (one attempt; "
            "an outage delays the job, the verdict stays pending)."
        ),
    )
    enrichment_interval_seconds: float = Field(
        default=30.0,
        gt=0,
        le=86_400,
        description="How often the worker drains the enrichment queue.",
    )
    feed_summaries_per_run: int = Field(
        default=20,
        ge=1,
        le=200,
        description=(
            "With a key: entries one feed run summarises (summary mode) or sends to its digest; "
            "the rest keep their excerpt, marked skipped."
        ),
    )
    briefing_tokens: int = Field(
        default=4_000,
        ge=200,
        le=50_000,
        description=(
            "Token budget of a briefing (four characters of its JSON a token): the least "
            "important lists are shortened to fit, and the briefing reports what it left out."
        ),
    )
    query_expansion: bool = Field(
        default=False,
        description="With a key: recall also searches a few LLM rephrasings of the query.",
    )
    query_expansion_phrasings: int = Field(
        default=3,
        ge=1,
        le=5,
        description="At most this many rephrasings searched beside the query.",
    )
    query_expansion_timeout_seconds: float = Field(
        default=2.0,
        gt=0,
        le=30,
        description=(
            "Timeout of the expansion request (one attempt, no retry); past "
            "it recall goes on without."
        ),
    )
    query_expansion_max_tokens: int = Field(
        default=150,
        ge=32,
        le=1024,
        description="max_tokens of the expansion request.",
    )
    query_expansion_cache_seconds: int = Field(
        default=7 * 86_400,
        ge=60,
        le=365 * 86_400,
        description=(
            "How long a query's rephrasings stay cached in Valkey (key: normalised query + model)."
        ),
    )
