-- Airlock schema: agents Airlock hosts over the Agent Client Protocol (ACP) and the chats they
-- run. A hosted chat outlives no engine: after a restart it is ended (`ended_at`) and its agent's
-- process group, when still there (`pid`, in `folder`), is killed.
CREATE TABLE acp_agents (
    name        TEXT PRIMARY KEY,
    command     TEXT NOT NULL,
    created_at  TEXT NOT NULL
);

CREATE TABLE acp_sessions (
    session_id  TEXT PRIMARY KEY REFERENCES sessions(id),
    agent       TEXT NOT NULL,
    folder      TEXT NOT NULL,
    pid         INTEGER,
    ended_at    TEXT
);
