//! The agents' fallbacks as the hook reads them when no engine answers: `agents.json` in the
//! data directory, which the engine rewrites at every start and whenever a fallback changes.

use airlock_core::AgentFallback;
use airlock_protocol::agents::FALLBACKS_FILE;
use std::collections::HashMap;
use std::path::Path;

/// The fallback an agent's hook answers when no engine decides, as `agents.json` says (the
/// agent's default, which fails closed, when it says nothing or cannot be read).
pub fn fallback_of(data_dir: &Path, agent: &str) -> AgentFallback {
    std::fs::read(data_dir.join(FALLBACKS_FILE))
        .ok()
        .and_then(|bytes| serde_json::from_slice::<HashMap<String, AgentFallback>>(&bytes).ok())
        .and_then(|all| all.get(agent).copied())
        .unwrap_or_else(|| AgentFallback::default_for(agent))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    #[test]
    fn every_agent_fails_closed_unless_the_person_chose_otherwise() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(fallback_of(dir.path(), "codex"), AgentFallback::Deny);
        assert_eq!(fallback_of(dir.path(), "claude-code"), AgentFallback::Deny);
        std::fs::write(dir.path().join(FALLBACKS_FILE), "not json").unwrap();
        assert_eq!(fallback_of(dir.path(), "codex"), AgentFallback::Deny);
        std::fs::write(dir.path().join(FALLBACKS_FILE), r#"{"codex":"ask"}"#).unwrap();
        assert_eq!(fallback_of(dir.path(), "codex"), AgentFallback::Ask);
    }
}
