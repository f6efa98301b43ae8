-- Airlock schema, version 8: devices paired with the phone inbox. Only a hash of each device's
-- token is kept; a revoked device stays listed with the time it was revoked.
CREATE TABLE remote_devices (
    id          TEXT PRIMARY KEY,
    name        TEXT NOT NULL,
    token_hash  TEXT NOT NULL UNIQUE,
    created_at  TEXT NOT NULL,
    last_used   TEXT,
    revoked_at  TEXT
);
