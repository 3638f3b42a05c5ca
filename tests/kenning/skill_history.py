"""A seeded history of Postgres work, the source of the skill tests and of docs/skills.md's example.

Two projects built a Postgres index concurrently (near-identical memories: one Do rule, two sources,
one shared gotcha), two abandoned pgbouncer's transaction mode (one Don't rule by name, two
sources), one tuned autovacuum once (a single source: held back until a person blesses it), and a
Redis memory carries another tag (never part of the postgres skill).
"""

from __future__ import annotations

from dataclasses import dataclass

from kenning.engine import Engine
from kenning.memory.experience import Approach, Report
from kenning.memory.memories import Draft

DOMAIN = "postgres"
INDEX_TEXT = (
    "Postgres migration on the {} table locked writes until we built the index concurrently."
)
GOTCHA = "CREATE INDEX CONCURRENTLY cannot run inside a transaction block"
DO_RULE = "Build indexes on busy tables with CREATE INDEX CONCURRENTLY"
VACUUM_RULE = "Lower autovacuum_vacuum_scale_factor on big, busy tables"
PGBOUNCER = "pgbouncer transaction mode"


@dataclass(frozen=True)
class History:
    orders: str
    payments: str
    vacuum: str
    pooling: str
    pooling_again: str
    redis: str


def remember(engine: Engine, text: str, project: str, tag: str = DOMAIN) -> str:
    return engine.memories.remember(
        Draft(text, namespace="episodic", project=project, tags=(tag,)), actor="agent"
    ).key


def seed(engine: Engine) -> History:
    """Write the history through the engine, as agents would."""
    orders = remember(engine, INDEX_TEXT.format("orders"), "shop")
    payments = remember(engine, INDEX_TEXT.format("payments"), "billing")
    for key, words in (
        (orders, DO_RULE),
        (payments, "Build the index concurrently so writes keep flowing"),
    ):
        engine.experience.record_experience(
            key,
            Report(effort=4, outcome="succeeded", breakthrough=words, gotchas=(GOTCHA,)),
            actor="agent",
        )
    vacuum = remember(
        engine,
        "Tuned Postgres autovacuum for the events table, which had grown bloated with dead tuples.",
        "shop",
    )
    engine.experience.record_experience(
        vacuum, Report(effort=3, outcome="succeeded", breakthrough=VACUUM_RULE), actor="agent"
    )
    pooling = engine.experience.log_abandoned(
        Approach(PGBOUNCER, "pattern", "prepared statements break"),
        effort=3,
        project="shop",
        context="Tried it for the Postgres connection pool.",
        actor="agent",
    ).key
    again = engine.experience.log_abandoned(
        Approach(PGBOUNCER, "pattern", "prepared statement errors under load"),
        effort=3,
        project="billing",
        context="Another service hit the same wall with Postgres.",
        actor="agent",
    ).key
    for key in (pooling, again):  # log_abandoned tags "abandoned"; the agent adds the domain
        engine.memories.retag(str(key), add=[DOMAIN], actor="agent")
    redis = remember(
        engine,
        "Redis eviction dropped session keys until maxmemory-policy was set.",
        "shop",
        "redis",
    )
    engine.experience.record_experience(
        redis,
        Report(effort=2, outcome="succeeded", breakthrough="Set maxmemory-policy explicitly"),
        actor="agent",
    )
    return History(orders, payments, vacuum, str(pooling), str(again), redis)
