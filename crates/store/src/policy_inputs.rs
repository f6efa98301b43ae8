//! Everything the person set, read at once as the policy's inputs.

use crate::{Result, Store};
use airlock_core::policy::{PolicyInputs, ServerPolicy};

impl Store {
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
            from_notification: self.from_notification()?,
        })
    }
}
