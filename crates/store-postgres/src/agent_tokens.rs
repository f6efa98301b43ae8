//! Each agent's own token for the API (its HTTP hook, an SDK client) on PostgreSQL (schema 3):
//! only its hash, one per agent; issuing and revoking are audited.

use crate::PostgresStore;
use crate::audit::insert_audit;
use crate::error::Error;
use airlock_store_port::{self as port, now};
use serde_json::json;

impl port::AgentTokens for PostgresStore {
    fn set_agent_token(&self, agent: &str, token_hash: &str) -> port::Result<()> {
        self.transaction(async |tx| {
            tx.execute(
                "INSERT INTO agent_tokens (agent, token_hash, created_at) VALUES ($1, $2, $3)
                 ON CONFLICT (agent) DO UPDATE SET token_hash = EXCLUDED.token_hash,
                                                   created_at = EXCLUDED.created_at",
                &[&agent, &token_hash, &now()],
            )
            .await?;
            insert_audit(
                tx,
                "user",
                "agent_token_issued",
                None,
                None,
                None,
                &json!({ "agent": agent }),
            )
            .await
        })
    }

    fn revoke_agent_token(&self, agent: &str) -> port::Result<bool> {
        self.transaction(async |tx| {
            let revoked = tx
                .execute("DELETE FROM agent_tokens WHERE agent = $1", &[&agent])
                .await?
                > 0;
            if revoked {
                insert_audit(
                    tx,
                    "user",
                    "agent_token_revoked",
                    None,
                    None,
                    None,
                    &json!({ "agent": agent }),
                )
                .await?;
            }
            Ok(revoked)
        })
    }

    fn agent_token_hashes(&self) -> port::Result<Vec<(String, String)>> {
        self.agent_token_pairs("SELECT agent, token_hash FROM agent_tokens ORDER BY agent")
    }

    /// Which agents have a token of their own and since when (Settings → Agents).
    fn agent_tokens_issued(&self) -> port::Result<Vec<(String, String)>> {
        self.agent_token_pairs("SELECT agent, created_at FROM agent_tokens ORDER BY agent")
    }
}

impl PostgresStore {
    /// Each agent with one more column of its token's row.
    fn agent_token_pairs(&self, sql: &'static str) -> port::Result<Vec<(String, String)>> {
        self.transaction(async |tx| {
            tx.query(sql, &[])
                .await?
                .iter()
                .map(|row| -> Result<(String, String), Error> {
                    Ok((row.try_get(0)?, row.try_get(1)?))
                })
                .collect()
        })
    }
}
