-- Airlock on PostgreSQL, schema version 1: the tables of the SQLite store's schema 12, in
-- PostgreSQL's words (identity keys, booleans, a `seq` where SQLite's rowid gave the order). Times are RFC 3339 UTC text, compared as text as in the SQLite
-- store; JSON is kept as the text it was written as.

CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    mode        TEXT,
    status      TEXT NOT NULL DEFAULT 'idle',
    last_error  TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL,
    title       TEXT
);

CREATE TABLE messages (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions(id),
    role        TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content     TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL
);
CREATE INDEX messages_by_session ON messages(session_id, id);

-- One row per tool call the model proposed; its result is what the model is sent back.
CREATE TABLE tool_calls (
    id                TEXT PRIMARY KEY,
    session_id        TEXT NOT NULL REFERENCES sessions(id),
    message_id        BIGINT NOT NULL REFERENCES messages(id),
    position          BIGINT NOT NULL,
    provider_call_id  TEXT NOT NULL,
    model_name        TEXT NOT NULL,
    server            TEXT NOT NULL,
    tool              TEXT NOT NULL,
    raw_args          TEXT NOT NULL,
    args              TEXT,
    args_hash         TEXT,
    state             TEXT NOT NULL,
    policy_step       TEXT,
    policy_why        TEXT,
    run_args          TEXT,
    result            TEXT,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    -- When the engine handed a running call to its tool: claimed once, never invoked twice.
    invoked_at        TEXT,
    -- An identical earlier call of the same step whose request decides this one too.
    same_as           TEXT REFERENCES tool_calls(id)
);
CREATE INDEX tool_calls_by_message ON tool_calls(message_id, position);
CREATE INDEX tool_calls_running ON tool_calls(message_id, position) WHERE state = 'running';
CREATE INDEX tool_calls_by_leader ON tool_calls(same_as) WHERE same_as IS NOT NULL;

CREATE TABLE approval_requests (
    approval_id   TEXT PRIMARY KEY,
    -- The order requests were made in (SQLite's rowid).
    seq           BIGINT GENERATED ALWAYS AS IDENTITY,
    tool_call_id  TEXT REFERENCES tool_calls(id),
    session_id    TEXT NOT NULL REFERENCES sessions(id),
    kind          TEXT NOT NULL,
    server        TEXT NOT NULL,
    tool          TEXT NOT NULL,
    args          TEXT NOT NULL,
    args_hash     TEXT NOT NULL,
    why           TEXT NOT NULL,
    status        TEXT NOT NULL DEFAULT 'pending',
    created_at    TEXT NOT NULL,
    expires_at    TEXT
);
CREATE INDEX approvals_pending ON approval_requests(status, created_at);
CREATE INDEX approvals_by_call ON approval_requests(tool_call_id);

CREATE TABLE decisions (
    approval_id   TEXT PRIMARY KEY REFERENCES approval_requests(approval_id),
    approve       BOOLEAN NOT NULL,
    reason        TEXT,
    edited_args   TEXT,
    remember      TEXT NOT NULL DEFAULT 'once',
    for_chat      BOOLEAN NOT NULL DEFAULT FALSE,
    decided_by    TEXT NOT NULL,
    decided_at    TEXT NOT NULL,
    grant_covers  TEXT
);

-- Where an agent tool call comes from; the request key makes asking twice find the same item.
CREATE TABLE agent_requests (
    approval_id    TEXT PRIMARY KEY REFERENCES approval_requests(approval_id),
    seq            BIGINT GENERATED ALWAYS AS IDENTITY,
    request_key    TEXT NOT NULL,
    agent          TEXT NOT NULL,
    client         TEXT,
    agent_session  TEXT NOT NULL,
    cwd            TEXT,
    editable       BOOLEAN NOT NULL,
    -- Posted in the deferred style (an app's approval client collects the decision later),
    -- and when its approved call was claimed to run (once).
    deferred       BOOLEAN NOT NULL DEFAULT FALSE,
    claimed_at     TEXT
);
CREATE INDEX agent_requests_by_key ON agent_requests(request_key);

CREATE TABLE settings (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);

CREATE TABLE servers (
    name                   TEXT PRIMARY KEY,
    default_setting        TEXT NOT NULL DEFAULT 'required',
    trust_read_only_hints  BOOLEAN NOT NULL DEFAULT FALSE,
    enabled                BOOLEAN NOT NULL DEFAULT TRUE,
    config                 TEXT NOT NULL DEFAULT '{}',
    definition_hash        TEXT
);

CREATE TABLE tool_settings (
    server   TEXT NOT NULL,
    tool     TEXT NOT NULL,
    setting  TEXT NOT NULL,
    PRIMARY KEY (server, tool)
);

-- Whether a notification may approve a tool (tool = '' for every tool of the server).
CREATE TABLE notification_approval (
    server  TEXT NOT NULL,
    tool    TEXT NOT NULL,
    allow   BOOLEAN NOT NULL,
    PRIMARY KEY (server, tool)
);

-- The pinned definition of each MCP tool and the one its server offers now; `change` says what
-- changed and suspends the tool's grants until the person reviews it.
CREATE TABLE tool_pins (
    server        TEXT NOT NULL,
    tool          TEXT NOT NULL,
    pinned_hash   TEXT NOT NULL,
    pinned        TEXT NOT NULL,
    current_hash  TEXT NOT NULL,
    current       TEXT NOT NULL,
    change        TEXT,
    PRIMARY KEY (server, tool)
);

-- Paired phones: only a hash of each device's token.
CREATE TABLE remote_devices (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    token_hash  TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL,
    last_used   TEXT,
    revoked_at  TEXT
);

-- The coding agents: what their hook answers when Airlock cannot decide, and their last request.
CREATE TABLE agents (
    name             TEXT PRIMARY KEY,
    fallback         TEXT NOT NULL DEFAULT 'deny' CHECK (fallback IN ('ask', 'deny')),
    last_request_at  TEXT,
    last_tool        TEXT,
    last_cwd         TEXT,
    last_outcome     TEXT
);

CREATE TABLE rules (
    id          TEXT PRIMARY KEY,
    server      TEXT NOT NULL,
    tool        TEXT NOT NULL,
    pointer     TEXT NOT NULL,
    kind        TEXT NOT NULL CHECK (kind IN ('glob', 'regex')),
    pattern     TEXT NOT NULL,
    effect      TEXT NOT NULL CHECK (effect IN ('allow', 'ask', 'deny')),
    created_at  TEXT NOT NULL
);

CREATE TABLE remembered (
    id          TEXT PRIMARY KEY,
    server      TEXT NOT NULL,
    tool        TEXT NOT NULL,
    args_hash   TEXT,
    session_id  TEXT,
    approve     BOOLEAN NOT NULL,
    created_at  TEXT NOT NULL,
    expires_at  TEXT,
    uses_left   BIGINT CHECK (uses_left IS NULL OR uses_left >= 0),
    pattern     TEXT
);

CREATE TABLE session_grants (
    session_id  TEXT NOT NULL REFERENCES sessions(id),
    server      TEXT NOT NULL,
    tool        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (session_id, server, tool)
);

CREATE TABLE audit (
    id            BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at            TEXT NOT NULL,
    actor         TEXT NOT NULL,
    action        TEXT NOT NULL,
    session_id    TEXT,
    tool_call_id  TEXT,
    approval_id   TEXT,
    detail        TEXT NOT NULL DEFAULT '{}'
);
