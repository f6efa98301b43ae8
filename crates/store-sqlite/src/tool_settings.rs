//! Per-tool approval settings.

use crate::audit::insert_audit;
use crate::{CachedExt, Result, Store, parse_enum};
use airlock_core::ToolSetting;
use rusqlite::params;
use serde_json::json;

impl Store {
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

    /// Seeds the settings of an agent's tools (`airlock connect`) unless the person already
    /// chose one, in one transaction, audited: returns the tools whose setting it set.
    pub fn seed_agent_tool_settings(
        &self,
        server: &str,
        tools: &[&str],
        setting: ToolSetting,
    ) -> Result<Vec<String>> {
        self.write(|tx| {
            let mut seeded = Vec::new();
            for tool in tools {
                let inserted = tx.run(
                    "INSERT INTO tool_settings (server, tool, setting) VALUES (?1, ?2, ?3) ON CONFLICT DO NOTHING",
                    params![server, tool, setting.as_str()],
                )?;
                if inserted > 0 {
                    seeded.push(tool.to_string());
                }
            }
            if !seeded.is_empty() {
                insert_audit(
                    tx,
                    "connect",
                    "tool_setting_changed",
                    None,
                    None,
                    None,
                    &json!({"server": server, "tools": seeded, "setting": setting}),
                )?;
            }
            Ok(seeded)
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

    /// Whether a notification may approve a tool (`tool: Some`) or a server's tools (`None`):
    /// `allow: None` forgets the choice, so the default applies again.
    pub fn set_from_notification(
        &self,
        server: &str,
        tool: Option<&str>,
        allow: Option<bool>,
    ) -> Result<()> {
        let tool_key = tool.unwrap_or("");
        self.write(|tx| {
            match allow {
                Some(allow) => tx.run(
                    "INSERT INTO notification_approval (server, tool, allow) VALUES (?1, ?2, ?3)
                     ON CONFLICT(server, tool) DO UPDATE SET allow = excluded.allow",
                    params![server, tool_key, allow],
                )?,
                None => tx.run(
                    "DELETE FROM notification_approval WHERE server = ?1 AND tool = ?2",
                    params![server, tool_key],
                )?,
            };
            insert_audit(
                tx,
                "user",
                "notification_approval_changed",
                None,
                None,
                None,
                &json!({"server": server, "tool": tool, "allow": allow}),
            )
        })
    }

    /// Every choice of [`Store::set_from_notification`]: `(server, tool or None, allow)`.
    pub fn from_notification(&self) -> Result<Vec<(String, Option<String>, bool)>> {
        self.read(|conn| {
            let mut stmt = conn.prepare("SELECT server, tool, allow FROM notification_approval")?;
            let rows = stmt.query_map([], |r| {
                let tool: String = r.get(1)?;
                Ok((r.get(0)?, (!tool.is_empty()).then_some(tool), r.get(2)?))
            })?;
            Ok(rows.collect::<std::result::Result<_, _>>()?)
        })
    }
}
