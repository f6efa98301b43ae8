//! Paired phones: only a hash of each device's token is kept; a revoked device stays listed.

use crate::PostgresStore;
use crate::audit::insert_audit;
use crate::error::Error;
use airlock_protocol::DeviceView;
use airlock_store_port::{self as port, now};
use serde_json::json;
use tokio_postgres::Row;

const COLUMNS: &str = "id, name, created_at, last_used, revoked_at";

fn device(row: &Row) -> Result<DeviceView, Error> {
    Ok(DeviceView {
        id: row.try_get(0)?,
        name: row.try_get(1)?,
        created_at: row.try_get(2)?,
        last_used: row.try_get(3)?,
        revoked_at: row.try_get(4)?,
    })
}

impl port::Devices for PostgresStore {
    fn add_device(&self, id: &str, name: &str, token_hash: &str) -> port::Result<DeviceView> {
        self.transaction(async |tx| {
            let row = tx
                .query_one(
                    &format!(
                        "INSERT INTO remote_devices (id, name, token_hash, created_at)
                         VALUES ($1, $2, $3, $4) RETURNING {COLUMNS}"
                    ),
                    &[&id, &name, &token_hash, &now()],
                )
                .await?;
            insert_audit(
                tx,
                "user",
                "device_paired",
                None,
                None,
                None,
                &json!({ "device": id, "name": name }),
            )
            .await?;
            device(&row)
        })
    }

    fn device_by_token_hash(&self, token_hash: &str) -> port::Result<Option<DeviceView>> {
        self.transaction(async |tx| {
            let sql = format!(
                "SELECT {COLUMNS} FROM remote_devices WHERE token_hash = $1 AND revoked_at IS NULL"
            );
            let Some(found) = tx.query_opt(&sql, &[&token_hash]).await? else {
                return Ok(None);
            };
            // As found (when it was used before this), and noted as used now.
            let found = device(&found)?;
            tx.execute(
                "UPDATE remote_devices SET last_used = $2 WHERE id = $1",
                &[&found.id, &now()],
            )
            .await?;
            Ok(Some(found))
        })
    }

    fn devices(&self) -> port::Result<Vec<DeviceView>> {
        self.transaction(async |tx| {
            let sql = format!("SELECT {COLUMNS} FROM remote_devices ORDER BY created_at, id");
            tx.query(&sql, &[]).await?.iter().map(device).collect()
        })
    }

    fn revoke_device(&self, id: &str) -> port::Result<bool> {
        self.transaction(async |tx| {
            let revoked = tx
                .execute(
                    "UPDATE remote_devices SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL",
                    &[&id, &now()],
                )
                .await?
                > 0;
            if revoked {
                insert_audit(
                    tx,
                    "user",
                    "device_revoked",
                    None,
                    None,
                    None,
                    &json!({ "device": id }),
                )
                .await?;
            }
            Ok(revoked)
        })
    }
}
