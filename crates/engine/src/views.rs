//! The engine's views of what is kept: approval requests, the audit trail, rules, remembered
//! decisions, servers' settings — as the protocol's types, never the store itself.

use crate::*;
use airlock_core::{Mode, Setting};
use serde_json::Value;

impl Engine {
    /// One approval request, whatever its status.
    pub fn approval(&self, approval_id: &str) -> Result<Option<ApprovalRow>> {
        Ok(self.inner.store.approval(approval_id)?)
    }

    /// The newest `limit` rows of the audit trail, oldest first.
    pub fn audit(&self, limit: usize) -> Result<Vec<AuditRow>> {
        Ok(self.inner.store.audit_rows(limit)?)
    }

    pub fn rules(&self) -> Result<Vec<RuleRow>> {
        Ok(self.inner.store.rules()?)
    }

    /// The remembered decisions that still apply (a timed grant past its time, or a counted
    /// one used up, is gone).
    pub fn remembered(&self) -> Result<Vec<RememberedRow>> {
        let now = airlock_core::policy::unix_now();
        let mut rows = self.inner.store.remembered()?;
        rows.retain(|row| row.entry.active_at(now));
        Ok(rows)
    }

    /// The active timed and counted grants (remembered approvals with a limit), soonest to end
    /// first: what Settings and the tray show, each revocable.
    pub fn grants(&self) -> Result<Vec<RememberedRow>> {
        let mut grants: Vec<RememberedRow> = self
            .remembered()?
            .into_iter()
            .filter(|row| {
                row.entry.approve
                    && (row.entry.expires_at.is_some() || row.entry.uses_left.is_some())
            })
            .collect();
        grants.sort_by(|a, b| {
            let end = |row: &RememberedRow| {
                row.entry
                    .expires_at
                    .as_deref()
                    .and_then(airlock_core::policy::unix_seconds)
                    .unwrap_or(i64::MAX)
            };
            end(a).cmp(&end(b)).then(a.created_at.cmp(&b.created_at))
        });
        Ok(grants)
    }

    /// Every server's settings as kept (see [`Engine::servers`] for their live state too).
    pub fn server_settings(&self) -> Result<Vec<ServerRow>> {
        Ok(self.inner.store.servers()?)
    }

    pub fn workspace_mode(&self) -> Result<Mode> {
        Ok(self.inner.store.workspace_mode()?)
    }

    /// One setting's stored value.
    pub fn setting(&self, setting: Setting) -> Result<Option<Value>> {
        Ok(self.inner.store.setting(setting.key())?)
    }

    /// A fresh id for an argument rule.
    pub fn new_rule_id() -> String {
        airlock_store_sqlite::Store::new_rule_id()
    }

    /// Compares an MCP tool's definition with its pin (pinning it when first seen); a change
    /// suspends the tool's grants until the person reviews it.
    pub fn check_tool_pin(
        &self,
        server: &str,
        tool: &str,
        definition: &Value,
        hash: &str,
    ) -> Result<PinCheck> {
        Ok(self.inner.store.check_pin(server, tool, definition, hash)?)
    }

    /// Why Airlock can no longer record decisions, when the disk refused a write.
    pub fn storage_failure(&self) -> Option<String> {
        self.inner.store.failure()
    }
}
