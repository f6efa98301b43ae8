//! Each agent's own token for the local API (its HTTP hook, an SDK client): only its hash, one
//! per agent. Issuing and revoking are audited.

use crate::audit::insert_audit;
use crate::{CachedExt, Result, Store, StoreError, now};
use rusqlite::params;
use serde_json::json;

impl Store {
    /// Keeps `token_hash` as `agent`'s token, replacing the one it had.
    pub fn set_agent_token(&self, agent: &str, token_hash: &str) -> Result<()> {
        self.write(|tx| {
            tx.run(
                "INSERT INTO agent_tokens (agent, token_hash, created_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(agent) DO UPDATE SET token_hash = excluded.token_hash,
                                                  created_at = excluded.created_at",
                params![agent, token_hash, now()],
            )?;
            insert_audit(
                tx,
                "user",
                "agent_token_issued",
                None,
                None,
                None,
                &json!({ "agent": agent }),
            )
        })
    }

    /// Forgets `agent`'s token; false when it had none.
    pub fn revoke_agent_token(&self, agent: &str) -> Result<bool> {
        self.write(|tx| {
            let revoked = tx.run("DELETE FROM agent_tokens WHERE agent = ?1", [agent])? > 0;
            if revoked {
                insert_audit(
                    tx,
                    "user",
                    "agent_token_revoked",
                    None,
                    None,
                    None,
                    &json!({ "agent": agent }),
                )?;
            }
            Ok(revoked)
        })
    }

    /// Every agent that has a token, with its token's hash.
    pub fn agent_token_hashes(&self) -> Result<Vec<(String, String)>> {
        self.read(|conn| {
            let mut stmt =
                conn.prepare_cached("SELECT agent, token_hash FROM agent_tokens ORDER BY agent")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.map(|r| r.map_err(StoreError::from)).collect()
        })
    }

    /// Every agent that has a token, with when it was issued.
    pub fn agent_tokens_issued(&self) -> Result<Vec<(String, String)>> {
        self.read(|conn| {
            let mut stmt =
                conn.prepare_cached("SELECT agent, created_at FROM agent_tokens ORDER BY agent")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.map(|r| r.map_err(StoreError::from)).collect()
        })
    }
}
