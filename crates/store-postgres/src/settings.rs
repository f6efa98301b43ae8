//! Key/value settings; each change audited in its transaction.

use crate::audit::insert_audit;
use crate::{PostgresStore, parse_json};
use airlock_store_port as port;
use serde_json::{Value, json};

impl port::Settings for PostgresStore {
    fn setting(&self, key: &str) -> port::Result<Option<Value>> {
        self.transaction(async |tx| {
            let row = tx
                .query_opt("SELECT value FROM settings WHERE key = $1", &[&key])
                .await?;
            row.map(|row| parse_json(row.try_get(0)?, "setting"))
                .transpose()
        })
    }

    fn set_setting(&self, key: &str, value: &Value) -> port::Result<()> {
        self.transaction(async |tx| {
            tx.execute(
                "INSERT INTO settings (key, value) VALUES ($1, $2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                &[&key, &value.to_string()],
            )
            .await?;
            insert_audit(
                tx,
                "user",
                "setting_changed",
                None,
                None,
                None,
                &json!({ "key": key, "value": value }),
            )
            .await
        })
    }
}
