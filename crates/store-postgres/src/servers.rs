//! MCP servers: their default, trust, whether they run, and their definition.

use crate::audit::insert_audit;
use crate::error::Error;
use crate::{PostgresStore, parse_enum, parse_json};
use airlock_core::ServerDefault;
use airlock_store_port::{self as port, ServerRow, StoreError, written};
use serde_json::{Value, json};
use tokio_postgres::types::ToSql;

impl PostgresStore {
    /// Sets one column of a known server, audited.
    fn update_server(
        &self,
        name: &str,
        column: &'static str,
        value: &(dyn ToSql + Sync),
        action: &str,
        detail: &Value,
    ) -> port::Result<()> {
        self.transaction(async |tx| {
            let changed = tx
                .execute(
                    &format!("UPDATE servers SET {column} = $2 WHERE name = $1"),
                    &[&name, value],
                )
                .await?;
            if changed == 0 {
                return Err(no_server(name));
            }
            insert_audit(tx, "user", action, None, None, None, detail).await
        })
    }
}

fn no_server(name: &str) -> Error {
    Error::Store(StoreError::Invalid(format!("no server named '{name}'")))
}

impl port::Servers for PostgresStore {
    fn ensure_server(
        &self,
        name: &str,
        default: ServerDefault,
        config: &Value,
    ) -> port::Result<()> {
        self.transaction(async |tx| {
            tx.execute(
                "INSERT INTO servers (name, default_setting, config) VALUES ($1, $2, $3)
                 ON CONFLICT (name) DO NOTHING",
                &[&name, &default.as_str(), &config.to_string()],
            )
            .await?;
            Ok(())
        })
    }

    fn set_server_default(&self, name: &str, default: ServerDefault) -> port::Result<()> {
        self.update_server(
            name,
            "default_setting",
            &default.as_str(),
            "server_default_changed",
            &json!({"server": name, "default": default}),
        )
    }

    fn servers(&self) -> port::Result<Vec<ServerRow>> {
        self.transaction(async |tx| {
            let rows = tx
                .query(
                    "SELECT name, default_setting, trust_read_only_hints, enabled, config
                     FROM servers ORDER BY name",
                    &[],
                )
                .await?;
            rows.iter()
                .map(|row| {
                    Ok(ServerRow {
                        name: row.try_get(0)?,
                        default: parse_enum(row.try_get(1)?, "server default")?,
                        trust_read_only_hints: row.try_get(2)?,
                        enabled: row.try_get(3)?,
                        config: parse_json(row.try_get(4)?, "server config")?,
                    })
                })
                .collect()
        })
    }

    fn upsert_server(&self, name: &str, config: &Value, definition_hash: &str) -> port::Result<()> {
        self.transaction(async |tx| {
            let previous = tx
                .query_opt(
                    "SELECT definition_hash FROM servers WHERE name = $1 FOR UPDATE",
                    &[&name],
                )
                .await?;
            let detail = json!({"server": name, "config": config});
            let Some(previous) = previous else {
                tx.execute(
                    "INSERT INTO servers (name, default_setting, config, definition_hash)
                     VALUES ($1, $2, $3, $4)",
                    &[
                        &name,
                        &ServerDefault::Required.as_str(),
                        &config.to_string(),
                        &definition_hash,
                    ],
                )
                .await?;
                return insert_audit(tx, "user", "server_added", None, None, None, &detail).await;
            };
            let old: Option<&str> = previous.try_get(0)?;
            tx.execute(
                "UPDATE servers SET config = $2, definition_hash = $3 WHERE name = $1",
                &[&name, &config.to_string(), &definition_hash],
            )
            .await?;
            if old.is_some_and(|old| old != definition_hash) {
                tx.execute(
                    "UPDATE tool_pins SET change = $2 WHERE server = $1",
                    &[&name, &written::SERVER_DEFINITION_CHANGED],
                )
                .await?;
            }
            insert_audit(tx, "user", "server_changed", None, None, None, &detail).await
        })
    }

    fn remove_server(&self, name: &str) -> port::Result<()> {
        self.transaction(async |tx| {
            if tx
                .execute("DELETE FROM servers WHERE name = $1", &[&name])
                .await?
                == 0
            {
                return Err(no_server(name));
            }
            for table in [
                "tool_settings",
                "rules",
                "remembered",
                "session_grants",
                "tool_pins",
                "notification_approval",
            ] {
                tx.execute(&format!("DELETE FROM {table} WHERE server = $1"), &[&name])
                    .await?;
            }
            insert_audit(
                tx,
                "user",
                "server_removed",
                None,
                None,
                None,
                &json!({"server": name}),
            )
            .await
        })
    }

    fn set_server_trust(&self, name: &str, trust_read_only_hints: bool) -> port::Result<()> {
        self.update_server(
            name,
            "trust_read_only_hints",
            &trust_read_only_hints,
            "server_changed",
            &json!({"server": name, "trust_read_only_hints": trust_read_only_hints}),
        )
    }

    fn set_server_enabled(&self, name: &str, enabled: bool) -> port::Result<()> {
        self.update_server(
            name,
            "enabled",
            &enabled,
            "server_changed",
            &json!({"server": name, "enabled": enabled}),
        )
    }
}
