//! Requests that belong to no tool call (elicitations) and reading a decision back.

use crate::approvals::insert_approval;
use crate::{PostgresStore, parse_enum, parse_json};
use airlock_core::{ApprovalStatus, ItemKind};
use airlock_store_port::{self as port, DecisionRow, NewApproval, now};

impl port::Requests for PostgresStore {
    fn decision(&self, approval_id: &str) -> port::Result<Option<DecisionRow>> {
        self.transaction(async |tx| {
            let Some(row) = tx
                .query_opt(
                    "SELECT approve, reason, edited_args FROM decisions WHERE approval_id = $1",
                    &[&approval_id],
                )
                .await?
            else {
                return Ok(None);
            };
            Ok(Some(DecisionRow {
                approve: row.try_get(0)?,
                reason: row.try_get(1)?,
                edited_args: row
                    .try_get::<_, Option<&str>>(2)?
                    .map(|text| parse_json(text, "decision arguments"))
                    .transpose()?,
            }))
        })
    }

    fn decided_by(&self, approval_id: &str) -> port::Result<Option<String>> {
        self.transaction(async |tx| {
            let row = tx
                .query_opt(
                    "SELECT decided_by FROM decisions WHERE approval_id = $1",
                    &[&approval_id],
                )
                .await?;
            Ok(row.map(|row| row.try_get(0)).transpose()?)
        })
    }

    fn pending_of_kind(&self, kind: ItemKind) -> port::Result<Vec<String>> {
        self.transaction(async |tx| {
            let rows = tx
                .query(
                    "SELECT approval_id FROM approval_requests
                     WHERE kind = $1 AND status = 'pending' ORDER BY seq",
                    &[&kind.as_str()],
                )
                .await?;
            rows.iter().map(|row| Ok(row.try_get(0)?)).collect()
        })
    }

    fn insert_request(&self, approval: &NewApproval) -> port::Result<()> {
        self.transaction(async |tx| insert_approval(tx, approval, &now(), None).await)
    }

    fn approval_status(&self, approval_id: &str) -> port::Result<Option<ApprovalStatus>> {
        self.transaction(async |tx| {
            let row = tx
                .query_opt(
                    "SELECT status FROM approval_requests WHERE approval_id = $1",
                    &[&approval_id],
                )
                .await?;
            row.map(|row| parse_enum(row.try_get(0)?, "approval status"))
                .transpose()
        })
    }
}
