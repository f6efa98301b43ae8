-- Airlock schema, version 9: Codex fails closed unless the person chose otherwise. Its hook's
-- fallback used to default to 'ask', which Codex's own approval may simply run; a Codex row
-- whose fallback nobody set becomes 'deny' (new rows get their agent's default on insert).
UPDATE agents SET fallback = 'deny'
WHERE name = 'codex' AND fallback = 'ask'
  AND NOT EXISTS (
    SELECT 1 FROM audit
    WHERE action = 'agent_fallback_set' AND json_extract(detail, '$.agent') = 'codex'
  );
