-- Airlock schema, version 5: other agents' tool calls (the agent gateway).

-- Where an agent tool call (approval_requests.kind = 'agent_tool_call') comes from. The
-- request key (agent, agent session, tool-use id or argument hash) makes asking twice find
-- the same item.
CREATE TABLE agent_requests (
    approval_id    TEXT PRIMARY KEY REFERENCES approval_requests(approval_id),
    request_key    TEXT NOT NULL,
    agent          TEXT NOT NULL,
    client         TEXT,
    agent_session  TEXT NOT NULL,
    cwd            TEXT,
    editable       INTEGER NOT NULL CHECK (editable IN (0, 1))
);
CREATE INDEX agent_requests_by_key ON agent_requests(request_key);

-- The coding agents: what their hook answers when Airlock cannot decide, and their last request.
CREATE TABLE agents (
    name             TEXT PRIMARY KEY,
    fallback         TEXT NOT NULL DEFAULT 'ask' CHECK (fallback IN ('ask', 'deny')),
    last_request_at  TEXT,
    last_tool        TEXT,
    last_cwd         TEXT,
    last_outcome     TEXT
);
