-- Airlock schema, version 12: fewer pages written per approval round (issue 33). Each commit
-- writes every page it changed to the log; these were pages no query needed.

-- messages and audit lose AUTOINCREMENT: with it, every insert also rewrote the sqlite_sequence
-- page (one more page in five of a round's six commits). Neither table ever deletes rows, so
-- a new row's id is still one more than the largest, as before. Rebuilt with the same columns,
-- rows and ids (foreign keys are off while migrating: tool_calls keeps referencing messages).
CREATE TABLE messages_v11 (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT NOT NULL REFERENCES sessions(id),
    role        TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content     TEXT NOT NULL DEFAULT '',
    created_at  TEXT NOT NULL
);
INSERT INTO messages_v11 (id, session_id, role, content, created_at)
    SELECT id, session_id, role, content, created_at FROM messages;
DROP TABLE messages;
ALTER TABLE messages_v11 RENAME TO messages;
CREATE INDEX messages_by_session ON messages(session_id, id);

CREATE TABLE audit_v11 (
    id            INTEGER PRIMARY KEY,
    at            TEXT NOT NULL,
    actor         TEXT NOT NULL,
    action        TEXT NOT NULL,
    session_id    TEXT,
    tool_call_id  TEXT,
    approval_id   TEXT,
    detail        TEXT NOT NULL DEFAULT '{}'
);
INSERT INTO audit_v11 (id, at, actor, action, session_id, tool_call_id, approval_id, detail)
    SELECT id, at, actor, action, session_id, tool_call_id, approval_id, detail FROM audit;
DROP TABLE audit;
ALTER TABLE audit_v11 RENAME TO audit;
DELETE FROM sqlite_sequence WHERE name IN ('messages', 'audit');

-- decisions is looked up only by its key: stored in the key's own b-tree (WITHOUT ROWID) instead
-- of a table plus an index on the key, one page less per decision.
CREATE TABLE decisions_v11 (
    approval_id   TEXT PRIMARY KEY REFERENCES approval_requests(approval_id),
    approve       INTEGER NOT NULL,
    reason        TEXT,
    edited_args   TEXT,
    remember      TEXT NOT NULL DEFAULT 'once',
    for_chat      INTEGER NOT NULL DEFAULT 0,
    decided_by    TEXT NOT NULL,
    decided_at    TEXT NOT NULL,
    grant_covers  TEXT
) WITHOUT ROWID;
INSERT INTO decisions_v11 SELECT approval_id, approve, reason, edited_args, remember, for_chat,
    decided_by, decided_at, grant_covers FROM decisions;
DROP TABLE decisions;
ALTER TABLE decisions_v11 RENAME TO decisions;

-- A session's calls are found through its messages (messages_by_session, then
-- tool_calls_by_message): an index of calls by session was one more page per step.
DROP INDEX tool_calls_by_session;

-- Only running calls are ever looked up by state (at start, to report them interrupted): an
-- index of every call's state was rewritten at each of a call's three state changes; this one
-- only when a call starts and ends running.
DROP INDEX tool_calls_by_state;
CREATE INDEX tool_calls_running ON tool_calls(message_id, position) WHERE state = 'running';
