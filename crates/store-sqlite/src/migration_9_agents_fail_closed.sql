-- Airlock schema, version 9: every agent fails closed unless the person chose otherwise. The
-- hooks' fallback used to default to 'ask', which hands the call to the agent's own approval
-- (Codex's may simply run it; Claude Code's runs it under its allow rules or bypass mode); a row
-- whose fallback nobody set becomes 'deny' (new rows get the default, deny, on insert).
UPDATE agents SET fallback = 'deny'
WHERE fallback = 'ask'
  AND NOT EXISTS (
    SELECT 1 FROM audit
    WHERE action = 'agent_fallback_set' AND json_extract(detail, '$.agent') = agents.name
  );
