//! MCP servers as the person defined them: add or replace, remove (with everything kept for
//! their tools), default, read-only trust, enabled.

use crate::audit::insert_audit;
use crate::{CachedExt, Result, Store, StoreError, parse_enum, parse_json};
use airlock_core::ServerDefault;
use airlock_protocol::ServerRow;
use rusqlite::{OptionalExtension, params};
use serde_json::{Value, json};

impl Store {
    /// Adds a server if it is not there yet; an existing server keeps the person's settings.
    pub fn ensure_server(&self, name: &str, default: ServerDefault, config: &Value) -> Result<()> {
        self.write(|tx| {
            tx.run(
                "INSERT INTO servers (name, default_setting, config) VALUES (?1, ?2, ?3)
                 ON CONFLICT(name) DO NOTHING",
                params![name, default.as_str(), config.to_string()],
            )?;
            Ok(())
        })
    }

    pub fn set_server_default(&self, name: &str, default: ServerDefault) -> Result<()> {
        self.update_server(
            name,
            "default_setting",
            default.as_str(),
            "server_default_changed",
            &json!({"server": name, "default": default}),
        )
    }

    pub fn servers(&self) -> Result<Vec<ServerRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare(
                "SELECT name, default_setting, trust_read_only_hints, enabled, config FROM servers ORDER BY name",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?, r.get(2)?, r.get(3)?, r.get::<_, String>(4)?))
            })?;
            rows.map(|row| {
                let (name, default, trust, enabled, config) = row?;
                Ok(ServerRow {
                    name,
                    default: parse_enum(&default, "server default")?,
                    trust_read_only_hints: trust,
                    enabled,
                    config: parse_json(&config, "server config")?,
                })
            })
            .collect()
        })
    }

    /// Adds a server or replaces its definition. A replaced definition with a different hash
    /// suspends every tool of the server until reviewed. New servers ask by default.
    pub fn upsert_server(&self, name: &str, config: &Value, definition_hash: &str) -> Result<()> {
        self.write(|tx| {
            let previous: Option<Option<String>> = tx
                .query_row("SELECT definition_hash FROM servers WHERE name = ?1", [name], |r| r.get(0))
                .optional()?;
            match previous {
                None => {
                    tx.run(
                        "INSERT INTO servers (name, default_setting, config, definition_hash) VALUES (?1, ?2, ?3, ?4)",
                        params![name, ServerDefault::Required.as_str(), config.to_string(), definition_hash],
                    )?;
                    insert_audit(tx, "user", "server_added", None, None, None, &json!({"server": name, "config": config}))
                }
                Some(old) => {
                    tx.run(
                        "UPDATE servers SET config = ?2, definition_hash = ?3 WHERE name = ?1",
                        params![name, config.to_string(), definition_hash],
                    )?;
                    if old.as_deref().is_some_and(|old| old != definition_hash) {
                        tx.run(
                            "UPDATE tool_pins SET change = ?2 WHERE server = ?1",
                            params![name, airlock_store_port::written::SERVER_DEFINITION_CHANGED],
                        )?;
                    }
                    insert_audit(tx, "user", "server_changed", None, None, None, &json!({"server": name, "config": config}))
                }
            }
        })
    }

    /// Removes a server with everything kept for its tools (settings, rules, remembered
    /// decisions, chat grants, pins), so a later server of the same name starts from nothing
    /// instead of inheriting approvals given to another program.
    pub fn remove_server(&self, name: &str) -> Result<()> {
        self.write(|tx| {
            if tx.run("DELETE FROM servers WHERE name = ?1", [name])? == 0 {
                return Err(StoreError::Invalid(format!("no server named '{name}'")));
            }
            for table in [
                "tool_settings",
                "rules",
                "remembered",
                "session_grants",
                "tool_pins",
                "notification_approval",
            ] {
                tx.run(&format!("DELETE FROM {table} WHERE server = ?1"), [name])?;
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
        })
    }

    pub fn set_server_trust(&self, name: &str, trust_read_only_hints: bool) -> Result<()> {
        self.update_server(
            name,
            "trust_read_only_hints",
            trust_read_only_hints,
            "server_changed",
            &json!({"server": name, "trust_read_only_hints": trust_read_only_hints}),
        )
    }

    pub fn set_server_enabled(&self, name: &str, enabled: bool) -> Result<()> {
        self.update_server(
            name,
            "enabled",
            enabled,
            "server_changed",
            &json!({"server": name, "enabled": enabled}),
        )
    }

    /// Sets one column of an existing server and audits it as `action`.
    fn update_server(
        &self,
        name: &str,
        column: &'static str,
        value: impl rusqlite::ToSql,
        action: &str,
        detail: &Value,
    ) -> Result<()> {
        self.write(|tx| {
            let changed = tx.run(
                &format!("UPDATE servers SET {column} = ?2 WHERE name = ?1"),
                params![name, value],
            )?;
            if changed == 0 {
                return Err(StoreError::Invalid(format!("no server named '{name}'")));
            }
            insert_audit(tx, "user", action, None, None, None, detail)
        })
    }
}
