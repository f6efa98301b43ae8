//! Remembered decisions.

use crate::{Result, Store, StoreError};
use airlock_core::policy::Remembered;
use airlock_protocol::RememberedRow;

impl Store {
    pub fn remembered(&self) -> Result<Vec<RememberedRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare(
                "SELECT id, server, tool, args_hash, session_id, approve, created_at FROM remembered ORDER BY created_at",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok(RememberedRow {
                    entry: Remembered {
                        id: r.get(0)?,
                        server: r.get(1)?,
                        tool: r.get(2)?,
                        args_hash: r.get(3)?,
                        session_id: r.get(4)?,
                        approve: r.get(5)?,
                    },
                    created_at: r.get(6)?,
                })
            })?;
            rows.map(|r| r.map_err(StoreError::from)).collect()
        })
    }

    pub fn revoke_remembered(&self, id: &str) -> Result<bool> {
        self.delete_audited("remembered", id, "remembered_revoked")
    }
}
