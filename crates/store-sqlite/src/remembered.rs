//! Remembered decisions.

use crate::audit::insert_audit;
use crate::{CachedExt, Result, Store, StoreError};
use airlock_core::policy::{GrantPattern, Remembered};
use airlock_protocol::RememberedRow;
use rusqlite::{Connection, OptionalExtension};
use serde_json::json;

impl Store {
    pub fn remembered(&self) -> Result<Vec<RememberedRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare(
                "SELECT id, server, tool, args_hash, session_id, approve, created_at, expires_at, uses_left,
                    pattern
                 FROM remembered ORDER BY created_at",
            )?;
            let rows = stmt.query_map([], |r| {
                let created_at: String = r.get(6)?;
                // A pattern that does not parse covers nothing: the policy asks.
                let pattern = r
                    .get::<_, Option<String>>(9)?
                    .map(|text| {
                        serde_json::from_str(&text).unwrap_or_else(|_| GrantPattern {
                            label: "a pattern that could not be read".into(),
                            fields: Vec::new(),
                        })
                    });
                Ok(RememberedRow {
                    entry: Remembered {
                        id: r.get(0)?,
                        server: r.get(1)?,
                        tool: r.get(2)?,
                        args_hash: r.get(3)?,
                        session_id: r.get(4)?,
                        approve: r.get(5)?,
                        expires_at: r.get(7)?,
                        uses_left: r.get(8)?,
                        pattern,
                        created_at: Some(created_at.clone()),
                    },
                    created_at,
                })
            })?;
            rows.map(|r| r.map_err(StoreError::from)).collect()
        })
    }

    pub fn revoke_remembered(&self, id: &str) -> Result<bool> {
        self.delete_audited("remembered", id, "remembered_revoked")
    }
}

/// Takes one use of a counted grant for a call being recorded allowed, or refuses
/// ([`StoreError::GrantUsedUp`]) when it has none left, has expired or is gone: the whole
/// step is then not written. A grant used up is removed, and the audit trail says so.
pub(crate) fn take_grant_use(
    tx: &Connection,
    grant: &str,
    session_id: &str,
    call_id: Option<&str>,
    at: &str,
) -> Result<()> {
    let found: Option<(Option<i64>, Option<String>)> = tx
        .prepare_cached("SELECT uses_left, expires_at FROM remembered WHERE id = ?1")?
        .query_row([grant], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((Some(left), expires_at)) = found else {
        return Err(StoreError::GrantUsedUp(grant.to_string()));
    };
    let expired = expires_at
        .as_deref()
        .is_some_and(airlock_store_port::written::grant_has_ended);
    if left <= 0 || expired {
        return Err(StoreError::GrantUsedUp(grant.to_string()));
    }
    if left == 1 {
        tx.run("DELETE FROM remembered WHERE id = ?1", [grant])?;
        insert_audit(
            tx,
            "policy",
            "grant_used_up",
            Some(session_id),
            call_id,
            None,
            &json!({ "grant": grant, "at": at }),
        )?;
    } else {
        tx.run(
            "UPDATE remembered SET uses_left = uses_left - 1 WHERE id = ?1",
            [grant],
        )?;
    }
    Ok(())
}
