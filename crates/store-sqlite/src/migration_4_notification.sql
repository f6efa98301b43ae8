-- Airlock schema, version 4: whether a notification may approve a tool (tool = '' for every
-- tool of the server). Without a row, only tools declared read-only by a trusted source may be
-- approved from a notification.
CREATE TABLE notification_approval (
    server TEXT NOT NULL,
    tool TEXT NOT NULL,
    allow INTEGER NOT NULL CHECK (allow IN (0, 1)),
    PRIMARY KEY (server, tool)
);
