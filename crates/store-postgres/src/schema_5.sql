-- Fencing, schema version 5: each hold of a replica's work has a token of its own. The writes
-- its holder makes for that work (claiming a call to run it, finishing it, recording a step,
-- ending the turn) check the hold with its token in their own transaction (locking it until
-- they commit), so a replica paused past its lease, whose work another replica took over,
-- writes nothing more for it (crates/store-postgres/src/replicas.rs: check_fence).
CREATE SEQUENCE airlock_held_token;
ALTER TABLE airlock_held ADD COLUMN token BIGINT NOT NULL DEFAULT nextval('airlock_held_token');
