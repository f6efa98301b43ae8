//! The rug-pull guard: pins of each MCP tool's description, schema and annotations (and, through
//! `servers.rs`, of each server's definition). A changed pin suspends the tool's standing grants
//! (the policy asks) until the person reviews it.

use crate::audit::insert_audit;
use crate::{CachedExt, PinCheck, Result, Store, StoreError, parse_json};
use airlock_store_port::written;
use rusqlite::{OptionalExtension, params};
use serde_json::{Value, json};

impl Store {
    /// Compares a tool's definition with its pin; pins it when first seen. A change is kept
    /// (with what changed) until [`Store::accept_pin`].
    pub fn check_pin(
        &self,
        server: &str,
        tool: &str,
        definition: &Value,
        hash: &str,
    ) -> Result<PinCheck> {
        self.write(|tx| {
            let row: Option<(String, String, Option<String>, String)> = tx
                .query_row(
                    "SELECT pinned_hash, pinned, change, current_hash FROM tool_pins WHERE server = ?1 AND tool = ?2",
                    params![server, tool],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
                .optional()?;
            let Some((pinned_hash, pinned, change, current_hash)) = row else {
                tx.run(
                    "INSERT INTO tool_pins (server, tool, pinned_hash, pinned, current_hash, current) VALUES (?1, ?2, ?3, ?4, ?3, ?4)",
                    params![server, tool, hash, definition.to_string()],
                )?;
                return Ok(PinCheck::New);
            };
            // The same definition as pinned and as last seen: nothing to write (the MCP proxy
            // checks the pin at every call).
            if pinned_hash == hash && current_hash == hash {
                return Ok(change.map_or(PinCheck::Same, PinCheck::Changed));
            }
            let change = if pinned_hash != hash {
                Some(written::what_changed(&parse_json(&pinned, "tool pin")?, definition))
            } else {
                change
            };
            tx.run(
                "UPDATE tool_pins SET current_hash = ?3, current = ?4, change = ?5 WHERE server = ?1 AND tool = ?2",
                params![server, tool, hash, definition.to_string(), change],
            )?;
            // Recorded once per new definition, not at every listing of the same one.
            if let Some(what) = change.as_ref().filter(|_| current_hash != hash) {
                insert_audit(tx, "engine", "tool_changed", None, None, None, &json!({"server": server, "tool": tool, "change": what}))?;
            }
            Ok(change.map_or(PinCheck::Same, PinCheck::Changed))
        })
    }

    /// The person reviewed the tool as it is now: pin it and lift the suspension.
    pub fn accept_pin(&self, server: &str, tool: &str) -> Result<bool> {
        self.write(|tx| {
            let changed = tx.run(
                "UPDATE tool_pins SET pinned_hash = current_hash, pinned = current, change = NULL
                 WHERE server = ?1 AND tool = ?2 AND change IS NOT NULL",
                params![server, tool],
            )? > 0;
            if changed {
                insert_audit(
                    tx,
                    "user",
                    "tool_change_reviewed",
                    None,
                    None,
                    None,
                    &json!({"server": server, "tool": tool}),
                )?;
            }
            Ok(changed)
        })
    }

    /// A tool's definition as its server last listed it (what a proxied tool's edits are
    /// checked against when Airlock does not run the server itself).
    pub fn current_definition(&self, server: &str, tool: &str) -> Result<Option<Value>> {
        self.read(|conn| {
            let current: Option<String> = conn
                .prepare_cached("SELECT current FROM tool_pins WHERE server = ?1 AND tool = ?2")?
                .query_row(params![server, tool], |r| r.get(0))
                .optional()?;
            current
                .map(|c| parse_json(&c, "tool definition"))
                .transpose()
        })
    }

    /// The changed tools of one server: `(tool, what changed, pinned definition, current one)`.
    pub fn tool_changes(&self, server: &str) -> Result<Vec<(String, String, Value, Value)>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT tool, change, pinned, current FROM tool_pins
                 WHERE server = ?1 AND change IS NOT NULL ORDER BY tool",
            )?;
            let rows = stmt.query_map([server], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                ))
            })?;
            rows.map(|row| {
                let (tool, change, pinned, current) = row?;
                Ok((
                    tool,
                    change,
                    parse_json(&pinned, "tool pin")?,
                    parse_json(&current, "tool definition")?,
                ))
            })
            .collect()
        })
    }

    /// `(server, tool, what changed)` for every suspended tool.
    pub fn suspended_tools(&self) -> Result<Vec<(String, String, String)>> {
        self.read(|conn| {
            let mut stmt = conn.prepare_cached(
                "SELECT server, tool, change FROM tool_pins WHERE change IS NOT NULL",
            )?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
            rows.map(|r| r.map_err(StoreError::from)).collect()
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use airlock_store_port::Store as _;

    #[test]
    fn a_changed_tool_or_server_is_suspended_until_reviewed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("a.db")).unwrap();
        store
            .upsert_server("fs", &json!({"command": "a"}), "h1")
            .unwrap();
        let v1 = json!({"description": "reads", "input_schema": {}, "annotations": null});
        assert_eq!(
            store.check_pin("fs", "read", &v1, "t1").unwrap(),
            PinCheck::New
        );
        assert_eq!(
            store.check_pin("fs", "read", &v1, "t1").unwrap(),
            PinCheck::Same
        );
        let v2 = json!({"description": "steals", "input_schema": {}, "annotations": null});
        assert_eq!(
            store.check_pin("fs", "read", &v2, "t2").unwrap(),
            PinCheck::Changed("description changed".into())
        );
        assert_eq!(store.suspended_tools().unwrap().len(), 1);
        assert!(store.policy_inputs().unwrap().suspended.len() == 1);
        assert!(store.accept_pin("fs", "read").unwrap());
        assert_eq!(
            store.check_pin("fs", "read", &v2, "t2").unwrap(),
            PinCheck::Same
        );

        store
            .upsert_server("fs", &json!({"command": "a"}), "h1")
            .unwrap();
        assert!(store.suspended_tools().unwrap().is_empty());
        store
            .upsert_server("fs", &json!({"command": "b"}), "h2")
            .unwrap();
        let suspended = store.suspended_tools().unwrap();
        assert!(
            suspended[0].2.contains("server definition"),
            "{suspended:?}"
        );
        assert!(matches!(
            store.check_pin("fs", "read", &v2, "t2").unwrap(),
            PinCheck::Changed(_)
        ));
    }

    #[test]
    fn removing_a_server_forgets_everything_kept_for_its_tools() {
        use airlock_core::{ArgRule, RuleEffect, RulePattern, ToolSetting};
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("a.db")).unwrap();
        let tool = json!({"description": "reads", "input_schema": {}, "annotations": null});
        for server in ["fs", "keep"] {
            store
                .upsert_server(server, &json!({"command": server}), "h")
                .unwrap();
            store
                .set_tool_setting(server, "read", ToolSetting::NotRequired)
                .unwrap();
            store
                .add_rule(&ArgRule {
                    id: format!("{server}-rule"),
                    server: server.into(),
                    tool: "read".into(),
                    pointer: "/path".into(),
                    pattern: RulePattern::Glob("*".into()),
                    effect: RuleEffect::Allow,
                })
                .unwrap();
            store.check_pin(server, "read", &tool, "t").unwrap();
            store
                .set_from_notification(server, Some("read"), Some(true))
                .unwrap();
            store
                .set_from_notification(server, None, Some(true))
                .unwrap();
        }
        store.remove_server("fs").unwrap();
        // A later server named "fs" may not be approved from notifications on the old one's say.
        let choices = store.from_notification().unwrap();
        assert!(
            choices.len() == 2 && choices.iter().all(|(server, _, _)| server == "keep"),
            "{choices:?}"
        );

        let names: Vec<String> = store
            .servers()
            .unwrap()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert!(
            !names.contains(&"fs".to_string()) && names.contains(&"keep".to_string()),
            "{names:?}"
        );
        let settings = store.tool_settings().unwrap();
        assert!(
            settings.iter().all(|(server, _, _)| server == "keep"),
            "{settings:?}"
        );
        let rules: Vec<String> = store
            .rules()
            .unwrap()
            .into_iter()
            .map(|r| r.rule.server)
            .collect();
        assert_eq!(rules, ["keep"]);
        // A new server of the same name meets its tools as new, not as pinned.
        assert_eq!(
            store.check_pin("fs", "read", &tool, "t").unwrap(),
            PinCheck::New
        );
        assert_eq!(
            store.check_pin("keep", "read", &tool, "t").unwrap(),
            PinCheck::Same
        );
        let audit = store.audit_rows(10).unwrap();
        assert!(
            audit
                .iter()
                .any(|row| row.action == "server_removed" && row.detail["server"] == "fs")
        );
        assert!(
            store.remove_server("fs").is_err(),
            "removing it twice says there is none"
        );
    }

    #[test]
    fn pending_requests_of_one_kind_are_listed() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("a.db")).unwrap();
        let session = store.ensure_session("s").unwrap();
        let args = json!({"message": "name?", "schema": {"type": "object"}});
        store
            .insert_request(&crate::NewApproval {
                approval_id: "e1".into(),
                tool_call_id: None,
                session_id: session.id,
                kind: airlock_core::ItemKind::Elicitation,
                server: "every".into(),
                tool: "elicitation".into(),
                args_hash: airlock_core::args_hash(&args),
                args,
                why: "asks".into(),
                expires_at: None,
            })
            .unwrap();
        assert_eq!(store.pending_approvals().unwrap().len(), 1);
        assert_eq!(
            store
                .pending_of_kind(airlock_core::ItemKind::Elicitation)
                .unwrap(),
            ["e1"]
        );
        assert_eq!(
            store.approval_status("e1").unwrap(),
            Some(airlock_core::ApprovalStatus::Pending)
        );
    }
}
