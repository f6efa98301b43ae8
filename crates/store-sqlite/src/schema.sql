-- Airlock schema, version 1. Times are RFC 3339 UTC text; JSON is stored as text.

CREATE TABLE sessions (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL UNIQUE,
    mode        TEXT,                       -- NULL: the workspace default applies
    status      TEXT NOT NULL DEFAULT 'idle',
    last_error  TEXT,
    created_at  TEXT NOT NULL,
    updated_at  TEXT NOT NULL
);

CREATE TABLE messages (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
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
    message_id        INTEGER NOT NULL REFERENCES messages(id),
    position          INTEGER NOT NULL,
    provider_call_id  TEXT NOT NULL,
    model_name        TEXT NOT NULL,
    server            TEXT NOT NULL,
    tool              TEXT NOT NULL,
    raw_args          TEXT NOT NULL,
    args              TEXT,                 -- NULL when the model sent invalid JSON
    args_hash         TEXT,
    state             TEXT NOT NULL,
    policy_step       TEXT,
    policy_why        TEXT,
    run_args          TEXT,                 -- the arguments the tool ran (or will run) with
    result            TEXT,                 -- JSON text returned to the model
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL
);
CREATE INDEX tool_calls_by_message ON tool_calls(message_id, position);
CREATE INDEX tool_calls_by_state ON tool_calls(state);
CREATE INDEX tool_calls_by_session ON tool_calls(session_id, message_id);

CREATE TABLE approval_requests (
    approval_id   TEXT PRIMARY KEY,
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
    approve       INTEGER NOT NULL,
    reason        TEXT,
    edited_args   TEXT,
    remember      TEXT NOT NULL DEFAULT 'once',
    for_chat      INTEGER NOT NULL DEFAULT 0,
    decided_by    TEXT NOT NULL,
    decided_at    TEXT NOT NULL
);

CREATE TABLE settings (
    key    TEXT PRIMARY KEY,
    value  TEXT NOT NULL
);

CREATE TABLE servers (
    name                   TEXT PRIMARY KEY,
    default_setting        TEXT NOT NULL DEFAULT 'required',
    trust_read_only_hints  INTEGER NOT NULL DEFAULT 0,
    enabled                INTEGER NOT NULL DEFAULT 1,
    config                 TEXT NOT NULL DEFAULT '{}'
);

CREATE TABLE tool_settings (
    server   TEXT NOT NULL,
    tool     TEXT NOT NULL,
    setting  TEXT NOT NULL,
    PRIMARY KEY (server, tool)
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
    approve     INTEGER NOT NULL,
    created_at  TEXT NOT NULL
);

CREATE TABLE session_grants (
    session_id  TEXT NOT NULL REFERENCES sessions(id),
    server      TEXT NOT NULL,
    tool        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    PRIMARY KEY (session_id, server, tool)
);

CREATE TABLE audit (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    at            TEXT NOT NULL,
    actor         TEXT NOT NULL,
    action        TEXT NOT NULL,
    session_id    TEXT,
    tool_call_id  TEXT,
    approval_id   TEXT,
    detail        TEXT NOT NULL DEFAULT '{}'
);
