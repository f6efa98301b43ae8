//! Requests that belong to no tool call (elicitations) and reading a decision back.

use crate::{DecisionRow, Result, Store, parse_json};
use airlock_core::ApprovalStatus;
use rusqlite::OptionalExtension;

impl Store {
    pub fn decision(&self, approval_id: &str) -> Result<Option<DecisionRow>> {
        self.read(|conn| {
            let row: Option<(bool, Option<String>, Option<String>)> = conn
                .query_row(
                    "SELECT approve, reason, edited_args FROM decisions WHERE approval_id = ?1",
                    [approval_id],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
                .optional()?;
            row.map(|(approve, reason, edited)| {
                let edited_args = edited
                    .map(|text| parse_json(&text, "decision arguments"))
                    .transpose()?;
                Ok(DecisionRow {
                    approve,
                    reason,
                    edited_args,
                })
            })
            .transpose()
        })
    }

    /// Who decided a request (`inbox`, `chat`, `notification`, `api`, …), once decided.
    pub fn decided_by(&self, approval_id: &str) -> Result<Option<String>> {
        self.read(|conn| {
            Ok(conn
                .query_row(
                    "SELECT decided_by FROM decisions WHERE approval_id = ?1",
                    [approval_id],
                    |r| r.get(0),
                )
                .optional()?)
        })
    }

    /// The ids of the pending requests of one kind.
    pub fn pending_of_kind(&self, kind: airlock_core::ItemKind) -> Result<Vec<String>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT approval_id FROM approval_requests WHERE kind = ?1 AND status = 'pending' ORDER BY rowid",
            )?;
            let rows = stmt.query_map([kind.as_str()], |r| r.get(0))?;
            Ok(rows.collect::<rusqlite::Result<_>>()?)
        })
    }

    /// Adds one request that belongs to no tool call (an elicitation).
    pub fn insert_request(&self, approval: &crate::NewApproval) -> Result<()> {
        self.write(|tx| crate::approvals::insert_approval(tx, approval, &crate::now(), None))
    }

    /// The status of one request.
    pub fn approval_status(&self, approval_id: &str) -> Result<Option<ApprovalStatus>> {
        self.read(|conn| {
            let text: Option<String> = conn
                .query_row(
                    "SELECT status FROM approval_requests WHERE approval_id = ?1",
                    [approval_id],
                    |r| r.get(0),
                )
                .optional()?;
            text.map(|t| crate::parse_enum(&t, "approval status"))
                .transpose()
        })
    }
}
