//! "Allow for this chat" grants.

use crate::{Result, Store, StoreError};

impl Store {
    /// The `(server, tool)` pairs allowed for this chat.
    pub fn session_grants(&self, session_id: &str) -> Result<Vec<(String, String)>> {
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached("SELECT server, tool FROM session_grants WHERE session_id = ?1")?;
            let rows = stmt.query_map([session_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.map(|r| r.map_err(StoreError::from)).collect()
        })
    }
}
