//! The calls in History (the audit trail) read back: rule previews and approval insights.

use crate::{PostgresStore, parse_json};
use airlock_store_port::{self as port, AskedRow, PastCall, written};
use serde_json::Value;

impl port::History for PostgresStore {
    fn past_calls(&self, server: &str, tool: &str) -> port::Result<Vec<PastCall>> {
        let actions: Vec<&str> = written::CALL_ACTIONS.to_vec();
        self.transaction(async |tx| {
            let rows = tx
                .query(
                    "SELECT a.detail, r.status FROM audit a
                     LEFT JOIN approval_requests r ON r.approval_id = a.approval_id
                     WHERE a.action = ANY($3)
                       AND a.detail::jsonb ->> 'server' = $1
                       AND a.detail::jsonb ->> 'tool' = $2
                     ORDER BY a.id",
                    &[&server, &tool, &actions],
                )
                .await?;
            rows.iter()
                .map(|row| {
                    let detail = parse_json(row.try_get(0)?, "audit detail")?;
                    let status: Option<&str> = row.try_get(1)?;
                    Ok(PastCall {
                        args: detail.get("args").cloned().unwrap_or(Value::Null),
                        denied_by_person: status == Some("denied"),
                    })
                })
                .collect()
        })
    }

    fn asked_rows(&self) -> port::Result<Vec<AskedRow>> {
        self.transaction(async |tx| {
            let rows = tx
                .query(
                    "SELECT r.server, r.tool, r.created_at, d.decided_at, r.status, r.args
                     FROM approval_requests r LEFT JOIN decisions d ON d.approval_id = r.approval_id
                     WHERE r.kind != 'elicitation'
                     ORDER BY r.created_at, r.seq",
                    &[],
                )
                .await?;
            rows.iter()
                .map(|row| {
                    Ok(AskedRow {
                        server: row.try_get(0)?,
                        tool: row.try_get(1)?,
                        created_at: row.try_get(2)?,
                        decided_at: row.try_get(3)?,
                        status: row.try_get(4)?,
                        args: parse_json(row.try_get(5)?, "approval arguments")?,
                    })
                })
                .collect()
        })
    }
}
