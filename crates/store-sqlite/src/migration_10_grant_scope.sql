-- Airlock schema, version 10: grants say what they cover. A timed or counted grant keeps the
-- pattern its calls' arguments must match (JSON: a label and each field's pointer and pattern;
-- NULL: any arguments, or exactly args_hash); the decision that made one keeps what it covers,
-- which the approved call shows.
ALTER TABLE remembered ADD COLUMN pattern TEXT;
ALTER TABLE decisions ADD COLUMN grant_covers TEXT;
