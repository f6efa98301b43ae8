-- Airlock on PostgreSQL, schema version 3 (after 1 and 2): a team server's people and routing,
-- agents' own tokens and the agents hosted over ACP; the SQLite store's migrations 13 to 15 in
-- PostgreSQL's words. Times are RFC 3339 UTC text and JSON the text it was written as, as in
-- schema 1.

-- Members: only a hash of each token is kept.
CREATE TABLE team_members (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    role        TEXT NOT NULL CHECK (role IN ('admin', 'approver', 'viewer')),
    groups      TEXT NOT NULL DEFAULT '[]',    -- a JSON array of group names
    token_hash  TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
);

CREATE TABLE team_routes (
    id                   TEXT PRIMARY KEY,
    server               TEXT NOT NULL,
    tool                 TEXT NOT NULL,          -- '*': every tool of the server
    pointer              TEXT,
    pattern              TEXT,                   -- a glob for the value at pointer
    steps                TEXT NOT NULL,          -- a JSON array: 'person:NAME' / 'group:NAME'
    quorum               BIGINT NOT NULL DEFAULT 1 CHECK (quorum >= 1),
    escalate_after_secs  BIGINT,
    created_at           TEXT NOT NULL
);

-- One row per routed item, written when it is first seen (a route matched, or delegated).
CREATE TABLE approval_routing (
    approval_id          TEXT PRIMARY KEY REFERENCES approval_requests(approval_id),
    route_id             TEXT,
    steps                TEXT NOT NULL,          -- the route's steps when the item came
    step                 BIGINT NOT NULL DEFAULT 0,
    assignee             TEXT NOT NULL,          -- who has it now: a step or a delegate
    quorum               BIGINT NOT NULL DEFAULT 1,
    escalate_after_secs  BIGINT,
    next_at              TEXT,                   -- the next step then (after the last: expiry)
    note                 TEXT,
    updated_at           TEXT NOT NULL
);
CREATE INDEX approval_routing_next ON approval_routing(next_at) WHERE next_at IS NOT NULL;

-- Approvals counted towards an item's quorum: one per person and arguments approved.
CREATE TABLE approval_votes (
    approval_id  TEXT NOT NULL REFERENCES approval_requests(approval_id),
    member_id    TEXT NOT NULL,
    args_hash    TEXT NOT NULL,
    edited_args  TEXT,
    at           TEXT NOT NULL,
    PRIMARY KEY (approval_id, member_id, args_hash)
);

-- Each agent's own token (its hook over HTTP, an SDK client): only its hash, one per agent.
CREATE TABLE agent_tokens (
    agent       TEXT PRIMARY KEY,
    token_hash  TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL
);

-- Agents hosted over the Agent Client Protocol and the chats they run.
CREATE TABLE acp_agents (
    name        TEXT PRIMARY KEY,
    command     TEXT NOT NULL,                 -- a JSON array: the program, then its arguments
    created_at  TEXT NOT NULL
);

CREATE TABLE acp_sessions (
    session_id  TEXT PRIMARY KEY REFERENCES sessions(id),
    agent       TEXT NOT NULL,
    folder      TEXT NOT NULL,
    pid         BIGINT,
    ended_at    TEXT
);
