//! The audit trail: every change a person makes is written with it, in its transaction.

use crate::error::Error;
use crate::{PostgresStore, parse_json};
use airlock_store_port::{self as port, AuditRow, now};
use deadpool_postgres::Transaction;
use serde_json::{Value, json};

pub(crate) async fn insert_audit(
    tx: &Transaction<'_>,
    actor: &str,
    action: &str,
    session_id: Option<&str>,
    tool_call_id: Option<&str>,
    approval_id: Option<&str>,
    detail: &Value,
) -> Result<(), Error> {
    tx.execute(
        "INSERT INTO audit (at, actor, action, session_id, tool_call_id, approval_id, detail)
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
        &[
            &now(),
            &actor,
            &action,
            &session_id,
            &tool_call_id,
            &approval_id,
            &detail.to_string(),
        ],
    )
    .await?;
    Ok(())
}

/// Which tables a person may delete a row of by id, each with what the audit calls it.
#[derive(Clone, Copy)]
pub(crate) enum Deletable {
    Rule,
    Remembered,
}

impl PostgresStore {
    /// Deletes the row `id` of `table`, audited as `action` when there was one.
    pub(crate) fn delete_audited(&self, table: Deletable, id: &str) -> port::Result<bool> {
        let (sql, action) = match table {
            Deletable::Rule => ("DELETE FROM rules WHERE id = $1", "rule_removed"),
            Deletable::Remembered => ("DELETE FROM remembered WHERE id = $1", "remembered_revoked"),
        };
        self.transaction(async |tx| {
            let removed = tx.execute(sql, &[&id]).await? > 0;
            if removed {
                insert_audit(tx, "user", action, None, None, None, &json!({ "id": id })).await?;
            }
            Ok(removed)
        })
    }
}

impl port::Audit for PostgresStore {
    fn audit(
        &self,
        actor: &str,
        action: &str,
        session_id: Option<&str>,
        approval_id: Option<&str>,
        detail: &Value,
    ) -> port::Result<()> {
        self.transaction(async |tx| {
            insert_audit(tx, actor, action, session_id, None, approval_id, detail).await
        })
    }

    fn audit_rows(&self, limit: usize) -> port::Result<Vec<AuditRow>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.transaction(async |tx| {
            let rows = tx
                .query(
                    "SELECT id, at, actor, action, session_id, tool_call_id, approval_id, detail
                     FROM (SELECT * FROM audit ORDER BY id DESC LIMIT $1) newest ORDER BY id",
                    &[&limit],
                )
                .await?;
            rows.iter()
                .map(|row| {
                    Ok(AuditRow {
                        id: row.try_get(0)?,
                        at: row.try_get(1)?,
                        actor: row.try_get(2)?,
                        action: row.try_get(3)?,
                        session_id: row.try_get(4)?,
                        tool_call_id: row.try_get(5)?,
                        approval_id: row.try_get(6)?,
                        detail: parse_json(row.try_get(7)?, "audit detail")?,
                    })
                })
                .collect()
        })
    }
}
