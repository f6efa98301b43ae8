-- Airlock schema, version 7: within one model step, a call identical to an earlier one (same
-- tool, same arguments) that would ask is not asked again: it follows that call's decision.
ALTER TABLE tool_calls ADD COLUMN same_as TEXT REFERENCES tool_calls(id);
CREATE INDEX tool_calls_by_leader ON tool_calls(same_as) WHERE same_as IS NOT NULL;
