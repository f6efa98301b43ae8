-- Several engines (replicas) on one database, schema version 2: each replica's lease, the work
-- each holds, the policy's generation, and the events too large for a notification.

-- A replica is alive while its lease has not run out (renewed every few seconds; the
-- database's clock decides, never a replica's).
CREATE TABLE airlock_replicas (
    id           TEXT PRIMARY KEY,
    lease_until  TIMESTAMPTZ NOT NULL
);

-- What a replica holds: a turn it drives (`turn`, the session id), an agent's item a hook waits
-- on through it (`agent_item`, the approval id). Another replica takes it only once the
-- holder's lease ran out (the rows are deleted in the transaction that takes them).
CREATE TABLE airlock_held (
    work     TEXT NOT NULL,
    key      TEXT NOT NULL,
    replica  TEXT NOT NULL,
    PRIMARY KEY (work, key, replica)
);
CREATE INDEX airlock_held_by_replica ON airlock_held(replica);

-- Bumped in the transaction of every change the policy or a turn's settings read: each
-- replica's cache compares it before it uses what it compiled.
CREATE TABLE airlock_policy (generation BIGINT NOT NULL);
INSERT INTO airlock_policy (generation) VALUES (0);

CREATE FUNCTION airlock_bump_policy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE airlock_policy SET generation = generation + 1;
    RETURN NULL;
END $$;

CREATE TRIGGER settings_policy AFTER INSERT OR UPDATE OR DELETE ON settings
    FOR EACH STATEMENT EXECUTE FUNCTION airlock_bump_policy();
CREATE TRIGGER servers_policy AFTER INSERT OR UPDATE OR DELETE ON servers
    FOR EACH STATEMENT EXECUTE FUNCTION airlock_bump_policy();
CREATE TRIGGER tool_settings_policy AFTER INSERT OR UPDATE OR DELETE ON tool_settings
    FOR EACH STATEMENT EXECUTE FUNCTION airlock_bump_policy();
CREATE TRIGGER notification_approval_policy AFTER INSERT OR UPDATE OR DELETE ON notification_approval
    FOR EACH STATEMENT EXECUTE FUNCTION airlock_bump_policy();
CREATE TRIGGER tool_pins_policy AFTER INSERT OR UPDATE OR DELETE ON tool_pins
    FOR EACH STATEMENT EXECUTE FUNCTION airlock_bump_policy();
CREATE TRIGGER rules_policy AFTER INSERT OR UPDATE OR DELETE ON rules
    FOR EACH STATEMENT EXECUTE FUNCTION airlock_bump_policy();
CREATE TRIGGER remembered_policy AFTER INSERT OR UPDATE OR DELETE ON remembered
    FOR EACH STATEMENT EXECUTE FUNCTION airlock_bump_policy();

-- An event whose JSON does not fit a notification's payload: the notification names its row.
CREATE TABLE airlock_outbox (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    body        TEXT NOT NULL,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT now()
);
