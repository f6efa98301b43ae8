-- Airlock schema: a session's title, the name a person reads when its name is a key (an
-- agent's session: `claude-code:<uuid>` is its key; "airlock: fix the tests" its title).
ALTER TABLE sessions ADD COLUMN title TEXT;
