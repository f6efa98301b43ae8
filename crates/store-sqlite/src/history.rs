//! The calls in History (the audit trail) read back for what learns from them: a rule's
//! preview (which past calls of a tool it would have matched, and which of those a person
//! denied) and the approval insights (how each tool's requests were decided, and how fast).

use crate::{AskedRow, PastCall, Result, Store, StoreError, parse_json};
use airlock_store_port::written;
use serde_json::Value;

impl Store {
    /// Every call of `server/tool` in History, oldest first.
    pub fn past_calls(&self, server: &str, tool: &str) -> Result<Vec<PastCall>> {
        self.read(|conn| {
            let call_actions = written::CALL_ACTIONS.map(|action| format!("'{action}'"));
            let call_actions = call_actions.join(", ");
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT a.detail, r.status FROM audit a
                 LEFT JOIN approval_requests r ON r.approval_id = a.approval_id
                 WHERE a.action IN ({call_actions})
                   AND json_extract(a.detail, '$.server') = ?1
                   AND json_extract(a.detail, '$.tool') = ?2
                 ORDER BY a.id"
            ))?;
            let rows = stmt.query_map([server, tool], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
            })?;
            rows.map(|row| {
                let (detail, status) = row.map_err(StoreError::from)?;
                let detail = parse_json(&detail, "audit detail")?;
                Ok(PastCall {
                    args: detail.get("args").cloned().unwrap_or(Value::Null),
                    denied_by_person: status.as_deref() == Some("denied"),
                })
            })
            .collect()
        })
    }

    /// Every tool call ever put to a person (not elicitations), oldest first, with its decision.
    pub fn asked_rows(&self) -> Result<Vec<AskedRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT r.server, r.tool, r.created_at, d.decided_at, r.status, r.args
                 FROM approval_requests r LEFT JOIN decisions d ON d.approval_id = r.approval_id
                 WHERE r.kind != 'elicitation'
                 ORDER BY r.created_at",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, Option<String>>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                ))
            })?;
            rows.map(|row| {
                let (server, tool, created_at, decided_at, status, args) =
                    row.map_err(StoreError::from)?;
                Ok(AskedRow {
                    server,
                    tool,
                    created_at,
                    decided_at,
                    status,
                    args: parse_json(&args, "approval arguments")?,
                })
            })
            .collect()
        })
    }
}
