-- mcp-memory-service 12.4.0, sqlite-vec backend: the memories table as its migrations create it
-- (mcp_memory_service/storage/mixins/migrations.py); the vector table is left out (not imported).
CREATE TABLE memories (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    content_hash TEXT UNIQUE NOT NULL,
    content TEXT NOT NULL,
    tags TEXT,
    memory_type TEXT,
    metadata TEXT,
    created_at REAL,
    updated_at REAL,
    created_at_iso TEXT,
    updated_at_iso TEXT,
    deleted_at REAL DEFAULT NULL
);
INSERT INTO memories (content_hash, content, tags, memory_type, metadata, created_at, updated_at, created_at_iso, updated_at_iso, deleted_at) VALUES
 ('a1', 'The payments gateway times out after 30 seconds; raise the nginx proxy_read_timeout, not the app timeout', 'payments,nginx', 'lesson', '{}', 1717200000.0, 1717200000.0, '2024-06-01T00:00:00Z', '2024-06-01T00:00:00Z', NULL),
 ('a2', 'We chose Valkey over Redis for the session store because of the license change', 'sessions,decision', 'decision', '{}', 1719792000.0, 1719792000.0, '2024-07-01T00:00:00Z', '2024-07-01T00:00:00Z', NULL),
 ('a3', 'The nightly export job writes CSV files to the reports bucket at 02:00 UTC', 'reports', 'note', '{}', 1722470400.0, 1722470400.0, '2024-08-01T00:00:00Z', '2024-08-01T00:00:00Z', NULL),
 ('a4', 'Obsolete: the staging cluster used to run on Docker Swarm', 'staging', 'note', '{}', 1700000000.0, 1700000000.0, '2023-11-14T22:13:20Z', '2023-11-14T22:13:20Z', 1720000000.0),
 ('a5', 'I prefer tabs over spaces in Makefiles only', 'style', 'preference', '{}', 1725148800.0, 1725148800.0, '2024-09-01T00:00:00Z', '2024-09-01T00:00:00Z', NULL);
