//! What a person's answers keep: remembered decisions, timed and counted grants, chat grants.

use crate::PostgresStore;
use crate::audit::{Deletable, insert_audit};
use crate::error::Error;
use airlock_core::policy::{GrantPattern, Remembered};
use airlock_store_port::{self as port, RememberedRow, StoreError, written};
use deadpool_postgres::Transaction;
use serde_json::json;

impl port::Grants for PostgresStore {
    fn remembered(&self) -> port::Result<Vec<RememberedRow>> {
        self.transaction(async |tx| {
            let rows = tx
                .query(
                    "SELECT id, server, tool, args_hash, session_id, approve, created_at,
                        expires_at, uses_left, pattern
                     FROM remembered ORDER BY created_at",
                    &[],
                )
                .await?;
            rows.iter()
                .map(|row| {
                    let created_at: String = row.try_get(6)?;
                    let uses_left = row
                        .try_get::<_, Option<i64>>(8)?
                        .map(u32::try_from)
                        .transpose()
                        .map_err(|e| StoreError::CorruptJson {
                            what: "grant uses",
                            message: e.to_string(),
                        })?;
                    // As the SQLite store: a pattern that cannot be read covers nothing.
                    let pattern = row.try_get::<_, Option<&str>>(9)?.map(|text| {
                        serde_json::from_str(text).unwrap_or_else(|_| GrantPattern {
                            label: "a pattern that could not be read".into(),
                            fields: Vec::new(),
                        })
                    });
                    Ok::<_, Error>(RememberedRow {
                        entry: Remembered {
                            id: row.try_get(0)?,
                            server: row.try_get(1)?,
                            tool: row.try_get(2)?,
                            args_hash: row.try_get(3)?,
                            session_id: row.try_get(4)?,
                            approve: row.try_get(5)?,
                            expires_at: row.try_get(7)?,
                            uses_left,
                            pattern,
                            created_at: Some(created_at.clone()),
                        },
                        created_at,
                    })
                })
                .collect()
        })
    }

    fn revoke_remembered(&self, id: &str) -> port::Result<bool> {
        self.delete_audited(Deletable::Remembered, id)
    }

    fn session_grants(&self, session_id: &str) -> port::Result<Vec<(String, String)>> {
        self.transaction(async |tx| {
            let rows = tx
                .query(
                    "SELECT server, tool FROM session_grants WHERE session_id = $1",
                    &[&session_id],
                )
                .await?;
            rows.iter()
                .map(|row| Ok((row.try_get(0)?, row.try_get(1)?)))
                .collect()
        })
    }
}

/// Takes one use of a counted grant for a call it lets run, in the transaction that records
/// the call: the grant's row is locked, so two steps (on any replica) never take its last use
/// both. `GrantUsedUp` when it has none left or has ended.
pub(crate) async fn take_grant_use(
    tx: &Transaction<'_>,
    grant: &str,
    session_id: &str,
    call_id: Option<&str>,
    at: &str,
) -> Result<(), Error> {
    let found = tx
        .query_opt(
            "SELECT uses_left, expires_at FROM remembered WHERE id = $1 FOR UPDATE",
            &[&grant],
        )
        .await?;
    let used_up = || Error::Store(StoreError::GrantUsedUp(grant.to_string()));
    let Some(found) = found else {
        return Err(used_up());
    };
    let Some(left) = found.try_get::<_, Option<i64>>(0)? else {
        return Err(used_up());
    };
    let expired = found
        .try_get::<_, Option<&str>>(1)?
        .is_some_and(written::grant_has_ended);
    if left <= 0 || expired {
        return Err(used_up());
    }
    if left == 1 {
        tx.execute("DELETE FROM remembered WHERE id = $1", &[&grant])
            .await?;
        insert_audit(
            tx,
            "policy",
            "grant_used_up",
            Some(session_id),
            call_id,
            None,
            &json!({ "grant": grant, "at": at }),
        )
        .await?;
    } else {
        tx.execute(
            "UPDATE remembered SET uses_left = uses_left - 1 WHERE id = $1",
            &[&grant],
        )
        .await?;
    }
    Ok(())
}
