//! Everything the person set: key/value settings, servers, per-tool settings, argument rules,
//! remembered decisions and "Allow for this chat" grants — and the policy inputs built from them.

use crate::audit::insert_audit;
use crate::{CachedExt, Result, Store, StoreError, now, parse_enum, parse_json};
use airlock_core::policy::{PolicyInputs, Remembered, ServerPolicy};
use airlock_core::{ArgRule, Mode, RuleEffect, RulePattern, ServerDefault, ToolSetting, ids};
use airlock_protocol::{RememberedRow, RuleRow, ServerRow};
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

    pub fn workspace_mode(&self) -> Result<Mode> {
        match self.setting(airlock_core::Setting::WorkspaceMode.key())? {
            Some(Value::String(text)) => parse_enum(&text, "workspace mode"),
            _ => Ok(Mode::Ask),
        }
    }

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
        self.write(|tx| {
            let changed = tx.run(
                "UPDATE servers SET default_setting = ?2 WHERE name = ?1",
                params![name, default.as_str()],
            )?;
            if changed == 0 {
                return Err(StoreError::Invalid(format!("no server named '{name}'")));
            }
            insert_audit(
                tx,
                "user",
                "server_default_changed",
                None,
                None,
                None,
                &json!({"server": name, "default": default}),
            )
        })
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

    /// Seeds a tool's setting unless the person already chose one.
    pub fn seed_tool_setting(&self, server: &str, tool: &str, setting: ToolSetting) -> Result<()> {
        self.write(|tx| {
            tx.run(
                "INSERT INTO tool_settings (server, tool, setting) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
                params![server, tool, setting.as_str()],
            )?;
            Ok(())
        })
    }

    pub fn set_tool_setting(&self, server: &str, tool: &str, setting: ToolSetting) -> Result<()> {
        self.write(|tx| {
            tx.run(
                "INSERT INTO tool_settings (server, tool, setting) VALUES (?1, ?2, ?3)
                 ON CONFLICT(server, tool) DO UPDATE SET setting = excluded.setting",
                params![server, tool, setting.as_str()],
            )?;
            insert_audit(
                tx,
                "user",
                "tool_setting_changed",
                None,
                None,
                None,
                &json!({"server": server, "tool": tool, "setting": setting}),
            )
        })
    }

    pub fn tool_settings(&self) -> Result<Vec<(String, String, ToolSetting)>> {
        self.read(|conn| {
            let mut stmt = conn.prepare("SELECT server, tool, setting FROM tool_settings")?;
            let rows =
                stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?)))?;
            rows.map(|row| {
                let (server, tool, setting) = row?;
                Ok((server, tool, parse_enum(&setting, "tool setting")?))
            })
            .collect()
        })
    }

    /// Adds an argument rule; the caller has compiled it once to check the pattern.
    pub fn add_rule(&self, rule: &ArgRule) -> Result<()> {
        let (kind, pattern) = match &rule.pattern {
            RulePattern::Glob(p) => ("glob", p),
            RulePattern::Regex(p) => ("regex", p),
        };
        self.write(|tx| {
            tx.run(
                "INSERT INTO rules (id, server, tool, pointer, kind, pattern, effect, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![
                    rule.id,
                    rule.server,
                    rule.tool,
                    rule.pointer,
                    kind,
                    pattern,
                    rule.effect.as_str(),
                    now()
                ],
            )?;
            insert_audit(
                tx,
                "user",
                "rule_added",
                None,
                None,
                None,
                &serde_json::to_value(rule).unwrap_or_default(),
            )
        })
    }

    pub fn remove_rule(&self, id: &str) -> Result<bool> {
        self.write(|tx| {
            let removed = tx.run("DELETE FROM rules WHERE id = ?1", [id])? > 0;
            if removed {
                insert_audit(
                    tx,
                    "user",
                    "rule_removed",
                    None,
                    None,
                    None,
                    &json!({ "id": id }),
                )?;
            }
            Ok(removed)
        })
    }

    pub fn rules(&self) -> Result<Vec<RuleRow>> {
        self.read(|conn| {
            let mut stmt = conn.prepare(
                "SELECT id, server, tool, pointer, kind, pattern, effect, created_at FROM rules ORDER BY created_at, id",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                    r.get::<_, String>(7)?,
                ))
            })?;
            rows.map(|row| {
                let (id, server, tool, pointer, kind, pattern, effect, created_at) = row?;
                let pattern = if kind == "regex" { RulePattern::Regex(pattern) } else { RulePattern::Glob(pattern) };
                let effect: RuleEffect = effect
                    .parse()
                    .map_err(|message| StoreError::CorruptJson { what: "rule effect", message })?;
                Ok(RuleRow { rule: ArgRule { id, server, tool, pointer, pattern, effect }, created_at })
            })
            .collect()
        })
    }

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
        self.write(|tx| {
            let removed = tx.run("DELETE FROM remembered WHERE id = ?1", [id])? > 0;
            if removed {
                insert_audit(
                    tx,
                    "user",
                    "remembered_revoked",
                    None,
                    None,
                    None,
                    &json!({ "id": id }),
                )?;
            }
            Ok(removed)
        })
    }

    /// The `(server, tool)` pairs allowed for this chat.
    pub fn session_grants(&self, session_id: &str) -> Result<Vec<(String, String)>> {
        self.read(|conn| {
            let mut stmt = conn
                .prepare_cached("SELECT server, tool FROM session_grants WHERE session_id = ?1")?;
            let rows = stmt.query_map([session_id], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.map(|r| r.map_err(StoreError::from)).collect()
        })
    }

    /// Everything the policy needs, read in one go.
    pub fn policy_inputs(&self) -> Result<PolicyInputs> {
        let servers = self
            .servers()?
            .into_iter()
            .map(|s| {
                (
                    s.name,
                    ServerPolicy {
                        default: s.default,
                        trust_read_only_hints: s.trust_read_only_hints,
                    },
                )
            })
            .collect();
        Ok(PolicyInputs {
            workspace_mode: Some(self.workspace_mode()?),
            servers,
            tool_settings: self.tool_settings()?,
            rules: self.rules()?.into_iter().map(|r| r.rule).collect(),
            remembered: self.remembered()?.into_iter().map(|r| r.entry).collect(),
            suspended: self.suspended_tools()?,
        })
    }

    /// A new rule id.
    pub fn new_rule_id() -> String {
        ids::new_id("rule")
    }
}
