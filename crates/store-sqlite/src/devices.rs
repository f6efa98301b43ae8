//! Devices paired with the phone inbox: a name, the hash of its token, when it was last used,
//! whether it was revoked. Every change is audited.

use crate::audit::insert_audit;
use crate::{CachedExt, Result, Store, StoreError, now};
use airlock_protocol::DeviceView;
use rusqlite::{OptionalExtension, Row, params};
use serde_json::json;

fn device(row: &Row<'_>) -> rusqlite::Result<DeviceView> {
    Ok(DeviceView {
        id: row.get(0)?,
        name: row.get(1)?,
        created_at: row.get(2)?,
        last_used: row.get(3)?,
        revoked_at: row.get(4)?,
    })
}

const COLUMNS: &str = "id, name, created_at, last_used, revoked_at";

impl Store {
    pub fn add_device(&self, id: &str, name: &str, token_hash: &str) -> Result<DeviceView> {
        self.write(|tx| {
            let at = now();
            tx.run(
                "INSERT INTO remote_devices (id, name, token_hash, created_at) VALUES (?1, ?2, ?3, ?4)",
                params![id, name, token_hash, at],
            )?;
            insert_audit(tx, "user", "device_paired", None, None, None, &json!({ "device": id, "name": name }))?;
            Ok(tx.row(
                &format!("SELECT {COLUMNS} FROM remote_devices WHERE id = ?1"),
                [id],
                device,
            )?)
        })
    }

    /// The device a token belongs to, unless revoked; marks it used now.
    pub fn device_by_token_hash(&self, token_hash: &str) -> Result<Option<DeviceView>> {
        self.write_relaxed(|tx| {
            let found = tx
                .prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM remote_devices WHERE token_hash = ?1 AND revoked_at IS NULL"
                ))?
                .query_row([token_hash], device)
                .optional()?;
            if let Some(found) = &found {
                tx.run(
                    "UPDATE remote_devices SET last_used = ?2 WHERE id = ?1",
                    params![found.id, now()],
                )?;
            }
            Ok(found)
        })
    }

    /// Every paired device, revoked ones too, oldest first.
    pub fn devices(&self) -> Result<Vec<DeviceView>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM remote_devices ORDER BY created_at, id"
            ))?;
            let rows = stmt.query_map([], device)?;
            rows.map(|r| r.map_err(StoreError::from)).collect()
        })
    }

    /// Revokes a device: its token is refused from now on. False when there is no such device
    /// or it was revoked already.
    pub fn revoke_device(&self, id: &str) -> Result<bool> {
        self.write(|tx| {
            let revoked = tx.run(
                "UPDATE remote_devices SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL",
                params![id, now()],
            )? > 0;
            if revoked {
                insert_audit(
                    tx,
                    "user",
                    "device_revoked",
                    None,
                    None,
                    None,
                    &json!({ "device": id }),
                )?;
            }
            Ok(revoked)
        })
    }
}
