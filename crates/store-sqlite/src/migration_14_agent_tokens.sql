-- Airlock schema: each agent's own token for the local API (its hook over HTTP, an SDK client),
-- not the main API token. Only a hash of it is kept; issuing a new one replaces the old, and
-- revoking it deletes the row (audited either way).
CREATE TABLE agent_tokens (
    agent       TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
);
