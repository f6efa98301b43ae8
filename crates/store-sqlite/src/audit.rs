//! The audit trail: who or what decided, with what arguments, and every refusal.

use crate::{CachedExt, Result, Store, StoreError, now, parse_json};
use airlock_protocol::AuditRow;
use rusqlite::{Connection, params};
use serde_json::Value;

impl Store {
    /// Deletes the person's row `id` of `table` (a rule, a remembered decision), auditing it as
    /// `action` when there was one; false when there was none.
    pub(crate) fn delete_audited(
        &self,
        table: &'static str,
        id: &str,
        action: &str,
    ) -> Result<bool> {
        self.write(|tx| {
            let removed = tx.run(&format!("DELETE FROM {table} WHERE id = ?1"), [id])? > 0;
            if removed {
                insert_audit(
                    tx,
                    "user",
                    action,
                    None,
                    None,
                    None,
                    &serde_json::json!({ "id": id }),
                )?;
            }
            Ok(removed)
        })
    }
}

pub(crate) fn insert_audit(
    tx: &Connection,
    actor: &str,
    action: &str,
    session_id: Option<&str>,
    tool_call_id: Option<&str>,
    approval_id: Option<&str>,
    detail: &Value,
) -> Result<()> {
    tx.prepare_cached(
        "INSERT INTO audit (at, actor, action, session_id, tool_call_id, approval_id, detail)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(params![
        now(),
        actor,
        action,
        session_id,
        tool_call_id,
        approval_id,
        detail.to_string()
    ])?;
    Ok(())
}

impl Store {
    /// Adds one row on its own, durably (for events outside a decision transaction).
    pub fn audit(
        &self,
        actor: &str,
        action: &str,
        session_id: Option<&str>,
        approval_id: Option<&str>,
        detail: &Value,
    ) -> Result<()> {
        self.write(|tx| insert_audit(tx, actor, action, session_id, None, approval_id, detail))
    }

    /// The newest `limit` rows, oldest first.
    pub fn audit_rows(&self, limit: usize) -> Result<Vec<AuditRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare(
                "SELECT id, at, actor, action, session_id, tool_call_id, approval_id, detail
                 FROM (SELECT * FROM audit ORDER BY id DESC LIMIT ?1) ORDER BY id",
            )?;
            let rows = stmt.query_map([limit as i64], |row| {
                Ok((
                    AuditRow {
                        id: row.get(0)?,
                        at: row.get(1)?,
                        actor: row.get(2)?,
                        action: row.get(3)?,
                        session_id: row.get(4)?,
                        tool_call_id: row.get(5)?,
                        approval_id: row.get(6)?,
                        detail: Value::Null,
                    },
                    row.get::<_, String>(7)?,
                ))
            })?;
            rows.map(|r| {
                let (mut audit, detail) = r.map_err(StoreError::from)?;
                audit.detail = parse_json(&detail, "audit detail")?;
                Ok(audit)
            })
            .collect()
        })
    }
}
