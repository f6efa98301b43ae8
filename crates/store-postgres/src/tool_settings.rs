//! Per-tool settings, and what a notification may approve (tool `''`: every tool of the
//! server).

use crate::audit::insert_audit;
use crate::{PostgresStore, parse_enum};
use airlock_core::ToolSetting;
use airlock_store_port as port;
use serde_json::json;

const SEED: &str = "INSERT INTO tool_settings (server, tool, setting) VALUES ($1, $2, $3)
    ON CONFLICT DO NOTHING";

impl port::ToolSettings for PostgresStore {
    fn seed_tool_setting(
        &self,
        server: &str,
        tool: &str,
        setting: ToolSetting,
    ) -> port::Result<()> {
        self.transaction(async |tx| {
            tx.execute(SEED, &[&server, &tool, &setting.as_str()])
                .await?;
            Ok(())
        })
    }

    fn seed_agent_tool_settings(
        &self,
        server: &str,
        tools: &[&str],
        setting: ToolSetting,
    ) -> port::Result<Vec<String>> {
        self.transaction(async |tx| {
            let mut seeded = Vec::new();
            for tool in tools {
                if tx
                    .execute(SEED, &[&server, tool, &setting.as_str()])
                    .await?
                    > 0
                {
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
                )
                .await?;
            }
            Ok(seeded)
        })
    }

    fn set_tool_setting(&self, server: &str, tool: &str, setting: ToolSetting) -> port::Result<()> {
        self.transaction(async |tx| {
            tx.execute(
                "INSERT INTO tool_settings (server, tool, setting) VALUES ($1, $2, $3)
                 ON CONFLICT (server, tool) DO UPDATE SET setting = excluded.setting",
                &[&server, &tool, &setting.as_str()],
            )
            .await?;
            insert_audit(
                tx,
                "user",
                "tool_setting_changed",
                None,
                None,
                None,
                &json!({"server": server, "tool": tool, "setting": setting}),
            )
            .await
        })
    }

    fn tool_settings(&self) -> port::Result<Vec<(String, String, ToolSetting)>> {
        self.transaction(async |tx| {
            let rows = tx
                .query("SELECT server, tool, setting FROM tool_settings", &[])
                .await?;
            rows.iter()
                .map(|row| {
                    Ok((
                        row.try_get(0)?,
                        row.try_get(1)?,
                        parse_enum(row.try_get(2)?, "tool setting")?,
                    ))
                })
                .collect()
        })
    }

    fn set_from_notification(
        &self,
        server: &str,
        tool: Option<&str>,
        allow: Option<bool>,
    ) -> port::Result<()> {
        let tool_key = tool.unwrap_or("");
        self.transaction(async |tx| {
            match allow {
                Some(allow) => {
                    tx.execute(
                        "INSERT INTO notification_approval (server, tool, allow) VALUES ($1, $2, $3)
                         ON CONFLICT (server, tool) DO UPDATE SET allow = excluded.allow",
                        &[&server, &tool_key, &allow],
                    )
                    .await?
                }
                None => {
                    tx.execute(
                        "DELETE FROM notification_approval WHERE server = $1 AND tool = $2",
                        &[&server, &tool_key],
                    )
                    .await?
                }
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
            .await
        })
    }

    fn from_notification(&self) -> port::Result<Vec<(String, Option<String>, bool)>> {
        self.transaction(async |tx| {
            let rows = tx
                .query("SELECT server, tool, allow FROM notification_approval", &[])
                .await?;
            rows.iter()
                .map(|row| {
                    let tool: String = row.try_get(1)?;
                    Ok((
                        row.try_get(0)?,
                        (!tool.is_empty()).then_some(tool),
                        row.try_get(2)?,
                    ))
                })
                .collect()
        })
    }
}
