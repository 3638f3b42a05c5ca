-- claude-mem 13.25.3 (~/.claude-mem/claude-mem.db): observations and session_summaries as its
-- SessionStore creates and migrates them (plugin/sqlite/SessionStore.js; the hierarchical fields
-- title, subtitle, facts, narrative, concepts, files_* are added by a migration). claude-mem runs
-- on bun:sqlite, which does not run under node here: this fixture follows that schema.
CREATE TABLE sdk_sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, memory_session_id TEXT UNIQUE, project TEXT);
CREATE TABLE observations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_session_id TEXT NOT NULL,
    project TEXT NOT NULL,
    text TEXT,
    type TEXT NOT NULL,
    title TEXT,
    subtitle TEXT,
    facts TEXT,
    narrative TEXT,
    concepts TEXT,
    files_read TEXT,
    files_modified TEXT,
    created_at TEXT NOT NULL,
    created_at_epoch INTEGER NOT NULL
);
CREATE TABLE session_summaries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    memory_session_id TEXT NOT NULL,
    project TEXT NOT NULL,
    request TEXT, investigated TEXT, learned TEXT, completed TEXT, next_steps TEXT,
    files_read TEXT, files_edited TEXT, notes TEXT,
    created_at TEXT NOT NULL,
    created_at_epoch INTEGER NOT NULL
);
INSERT INTO sdk_sessions (memory_session_id, project) VALUES ('s1', 'Shop-API');
INSERT INTO observations (memory_session_id, project, text, type, title, narrative, concepts, created_at, created_at_epoch) VALUES
 ('s1', 'Shop-API', NULL, 'bugfix', 'Flaky checkout test fixed', 'The checkout test was flaky because it depended on the wall clock; it now uses a frozen clock fixture', '["testing","time"]', '2025-03-02T10:00:00Z', 1740909600000),
 ('s1', 'Shop-API', NULL, 'decision', 'Orders are idempotent by request id', 'Order creation takes an Idempotency-Key header and stores it for 24 hours', '["api","idempotency"]', '2025-03-03T10:00:00Z', 1740996000000),
 ('s1', 'Shop-API', 'Gradle builds are cached on the self-hosted runner under /cache/gradle', 'discovery', NULL, NULL, NULL, '2025-03-04T10:00:00Z', 1741082400000);
INSERT INTO session_summaries (memory_session_id, project, request, learned, completed, next_steps, created_at, created_at_epoch) VALUES
 ('s1', 'Shop-API', 'fix the flaky tests', 'Frozen clocks make the time-dependent tests deterministic', 'Replaced datetime.now() in the checkout service with an injected clock', 'port the other services', '2025-03-04T12:00:00Z', 1741089600000);
