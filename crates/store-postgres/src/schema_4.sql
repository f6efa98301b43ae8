-- Agents' tokens are cached by each replica like the policy (crates/engine/src/agent_tokens.rs):
-- issuing or revoking one moves the policy generation, so a token revoked through one replica
-- is refused by every other one at its next request.
CREATE TRIGGER agent_tokens_policy AFTER INSERT OR UPDATE OR DELETE ON agent_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION airlock_bump_policy();
