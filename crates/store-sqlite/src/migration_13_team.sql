-- Airlock schema: people on a team server. Members (only a hash of each token is kept), the
-- routes that send a tool's calls to a person or a group, each routed item's state (who it is
-- with now, its quorum, when it escalates), and the approvals counted towards a quorum.
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
    quorum               INTEGER NOT NULL DEFAULT 1 CHECK (quorum >= 1),
    escalate_after_secs  INTEGER,
    created_at           TEXT NOT NULL
);

-- One row per routed item, written when it is first seen (a route matched, or delegated).
CREATE TABLE approval_routing (
    approval_id          TEXT PRIMARY KEY REFERENCES approval_requests(approval_id),
    route_id             TEXT,
    steps                TEXT NOT NULL,          -- the route's steps when the item came
    step                 INTEGER NOT NULL DEFAULT 0,
    assignee             TEXT NOT NULL,          -- who has it now: a step or a delegate
    quorum               INTEGER NOT NULL DEFAULT 1,
    escalate_after_secs  INTEGER,
    next_at              TEXT,                   -- the next step then (after the last: expiry)
    note                 TEXT,
    updated_at           TEXT NOT NULL
);
CREATE INDEX approval_routing_next ON approval_routing(next_at);

-- Approvals counted towards an item's quorum: one per person and arguments approved.
CREATE TABLE approval_votes (
    approval_id  TEXT NOT NULL REFERENCES approval_requests(approval_id),
    member_id    TEXT NOT NULL,
    args_hash    TEXT NOT NULL,
    edited_args  TEXT,
    at           TEXT NOT NULL,
    PRIMARY KEY (approval_id, member_id, args_hash)
);
