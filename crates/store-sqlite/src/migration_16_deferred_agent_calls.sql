-- Airlock schema: agent calls in the deferred style (an app's approval client posts the call,
-- gets its id at once and collects the decision later, perhaps after exiting). Such an item
-- stays without a waiter and across restarts; an approved one is claimed once, before its
-- client runs the tool, so the tool runs at most once.
ALTER TABLE agent_requests ADD COLUMN deferred INTEGER NOT NULL DEFAULT 0 CHECK (deferred IN (0, 1));
ALTER TABLE agent_requests ADD COLUMN claimed_at TEXT;
