-- Airlock schema, version 6: timed and counted grants. A remembered approval may last until a
-- time (expires_at, RFC 3339 UTC) or for a number of calls (uses_left); a call that uses one
-- takes it in the same transaction that records the call allowed.
ALTER TABLE remembered ADD COLUMN expires_at TEXT;
ALTER TABLE remembered ADD COLUMN uses_left INTEGER CHECK (uses_left IS NULL OR uses_left >= 0);
