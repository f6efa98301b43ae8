//! Key/value settings (their keys, kinds and defaults: `airlock_core::Setting`). Servers, tool
//! settings, rules, remembered decisions and grants each have their own module.

use crate::audit::insert_audit;
use crate::{CachedExt, Result, Store, parse_json};
use rusqlite::{OptionalExtension, params};
use serde_json::{Value, json};

impl Store {
    pub fn setting(&self, key: &str) -> Result<Option<Value>> {
        self.read(|conn| {
            let text: Option<String> = conn
                .query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| {
                    r.get(0)
                })
                .optional()?;
            text.map(|t| parse_json(&t, "setting")).transpose()
        })
    }

    pub fn set_setting(&self, key: &str, value: &Value) -> Result<()> {
        self.write(|tx| {
            tx.run(
                "INSERT INTO settings (key, value) VALUES (?1, ?2)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                params![key, value.to_string()],
            )?;
            insert_audit(
                tx,
                "user",
                "setting_changed",
                None,
                None,
                None,
                &json!({ "key": key, "value": value }),
            )
        })
    }
}
