-- Airlock schema, version 2: MCP servers and the rug-pull guard.

-- SHA-256 of the server's definition (command, args, env names, cwd, URL, header names) as last
-- reviewed; a different definition suspends every grant for the server's tools.
ALTER TABLE servers ADD COLUMN definition_hash TEXT;

-- The pinned definition (description, input schema, annotations) of each tool, and the one the
-- server offers now when it differs: `change` says what changed and suspends the tool's grants
-- until the person reviews it (approving one of its calls).
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
