//! Each agent's own token for the local API (its HTTP hook, an SDK client), instead of the main
//! API token: issued here (256 random bits, shown once; the store keeps its SHA-256), looked up
//! on every request the main token does not cover, and revoked. The API lets such a token reach
//! only the agents' routes, posting as its own agent ([`airlock_protocol::agents`]).
//!
//! Also the loopback port agents' HTTP hooks post to, kept across restarts so that the URL
//! `airlock connect AGENT --http` wrote stays this engine's.

use crate::*;
use airlock_core::Setting;
use airlock_protocol::AgentToken;
use airlock_protocol::agents::AGENT_HOOK_PATH;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// Each agent that has a token, with its token's SHA-256.
type TokenHashes = Vec<(String, [u8; 32])>;

/// The agents' token hashes, read from the store once and again after each change — this
/// engine's, or another replica's: kept with the policy generation they were read at, so a
/// token revoked through one replica is refused by every other one at its next request.
#[derive(Debug, Default)]
pub(crate) struct AgentTokens(RwLock<Option<(Option<i64>, Arc<TokenHashes>)>>);

impl AgentTokens {
    pub(crate) fn forget(&self) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = None;
    }
}

fn token_hash(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// An agent's name as a token is issued for: what the agents' calls name (`claude-code`, an SDK
/// client's own name), 1 to 64 lowercase letters, digits, `.`, `_` or `-`, starting with a
/// letter or digit; optionally followed by `@` and the machine the agent runs on, in the same
/// letters (`claude-code@build-7`), so that the same agent on each machine has a token of its
/// own (a team server's agents), each speaking for the agent.
fn check_agent_name(agent: &str) -> Result<()> {
    let fits = |part: &str| {
        (1..=64).contains(&part.len())
            && part.starts_with(|c: char| c.is_ascii_lowercase() || c.is_ascii_digit())
            && part
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c))
    };
    let (name, machine) = match agent.split_once('@') {
        Some((name, machine)) => (name, Some(machine)),
        None => (agent, None),
    };
    if fits(name) && machine.is_none_or(fits) {
        Ok(())
    } else {
        Err(EngineError::Invalid(format!(
            "'{agent}' is not an agent's name: 1 to 64 lowercase letters, digits, '.', '_' or '-' (then '@' and its machine's, in the same letters)"
        )))
    }
}

/// The agent a token issued for `agent` (`claude-code@build-7`) speaks for: `claude-code`.
fn speaks_for(agent: &str) -> &str {
    agent.split_once('@').map_or(agent, |(name, _)| name)
}

impl Engine {
    /// A new token of `agent`'s own, returned once; it replaces the one the agent had.
    pub fn issue_agent_token(&self, agent: &str) -> Result<AgentToken> {
        check_agent_name(agent)?;
        let token = format!(
            "airlock_agent_{:032x}{:032x}",
            rand::random::<u128>(),
            rand::random::<u128>()
        );
        self.inner
            .store
            .set_agent_token(agent, &hex::encode(token_hash(&token)))?;
        self.inner.agent_tokens.forget();
        Ok(AgentToken {
            agent: agent.to_string(),
            token,
            hook_url: self.agent_hook_url(speaks_for(agent))?,
        })
    }

    /// Refuses `agent`'s token from now on; false when it had none.
    pub fn revoke_agent_token(&self, agent: &str) -> Result<bool> {
        let revoked = self.inner.store.revoke_agent_token(agent)?;
        self.inner.agent_tokens.forget();
        Ok(revoked)
    }

    /// The agent whose token `token` is, if it is one. Every kept hash is compared in constant
    /// time, so timing tells nothing of a token or of which agent has one.
    pub fn agent_for_token(&self, token: &str) -> Result<Option<String>> {
        // Read before the hashes: a change committed meanwhile moves it past this one.
        let generation = self.inner.policy_generation()?;
        let cached = self
            .inner
            .agent_tokens
            .0
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .filter(|(read_at, _)| *read_at == generation);
        let tokens = match cached {
            Some((_, tokens)) => tokens,
            None => {
                let loaded: TokenHashes = self
                    .inner
                    .store
                    .agent_token_hashes()?
                    .into_iter()
                    .filter_map(|(agent, hash)| {
                        let bytes: [u8; 32] = hex::decode(hash).ok()?.try_into().ok()?;
                        Some((agent, bytes))
                    })
                    .collect();
                let loaded = Arc::new(loaded);
                *self
                    .inner
                    .agent_tokens
                    .0
                    .write()
                    .unwrap_or_else(|p| p.into_inner()) = Some((generation, loaded.clone()));
                loaded
            }
        };
        let given = token_hash(token);
        let mut found = None;
        for (agent, hash) in tokens.iter() {
            if bool::from(hash[..].ct_eq(&given[..])) {
                found = Some(speaks_for(agent).to_string());
            }
        }
        Ok(found)
    }

    /// The loopback port agents' HTTP hooks post to, once one was chosen.
    pub fn agent_hook_port(&self) -> Result<Option<u16>> {
        Ok(self
            .inner
            .store
            .setting(Setting::AgentHookPort.key())?
            .and_then(|value| u16::try_from(value.as_u64()?).ok()))
    }

    /// Keeps the port the host bound for agents' HTTP hooks (only when it changed).
    pub fn set_agent_hook_port(&self, port: u16) -> Result<()> {
        if self.agent_hook_port()? == Some(port) {
            return Ok(());
        }
        self.inner
            .store
            .set_setting(Setting::AgentHookPort.key(), &serde_json::json!(port))?;
        Ok(())
    }

    /// Where `agent`'s HTTP hook posts, for an agent whose hook Airlock answers, once the port
    /// is known.
    pub fn agent_hook_url(&self, agent: &str) -> Result<Option<String>> {
        if !airlock_agents::is_hook_agent(agent) {
            return Ok(None);
        }
        Ok(self
            .agent_hook_port()?
            .map(|port| format!("http://127.0.0.1:{port}{AGENT_HOOK_PATH}{agent}")))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn engine(dir: &std::path::Path) -> Engine {
        Engine::open(EngineConfig {
            data_dir: dir.to_path_buf(),
            workspace: Some(dir.join("workspace")),
        })
        .unwrap()
    }

    #[test]
    fn a_token_names_its_agent_until_it_is_replaced_or_revoked() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path());
        let first = engine.issue_agent_token("claude-code").unwrap();
        let other = engine.issue_agent_token("my-sdk-app").unwrap();
        assert_eq!(
            engine.agent_for_token(&first.token).unwrap().as_deref(),
            Some("claude-code")
        );
        assert_eq!(
            engine.agent_for_token(&other.token).unwrap().as_deref(),
            Some("my-sdk-app")
        );
        assert_eq!(engine.agent_for_token("airlock_agent_00").unwrap(), None);
        assert_eq!(engine.agent_for_token("").unwrap(), None);

        let second = engine.issue_agent_token("claude-code").unwrap();
        assert_ne!(first.token, second.token);
        assert_eq!(
            engine.agent_for_token(&first.token).unwrap(),
            None,
            "a replaced token still works"
        );
        assert!(engine.revoke_agent_token("claude-code").unwrap());
        assert!(!engine.revoke_agent_token("claude-code").unwrap());
        assert_eq!(engine.agent_for_token(&second.token).unwrap(), None);
        // Only the hash is kept, and it survives a restart.
        drop(engine);
        let engine = self::engine(dir.path());
        assert_eq!(
            engine.agent_for_token(&other.token).unwrap().as_deref(),
            Some("my-sdk-app")
        );
        for file in ["airlock.db", "airlock.db-wal"] {
            let bytes = std::fs::read(dir.path().join(file)).unwrap_or_default();
            assert!(
                !String::from_utf8_lossy(&bytes).contains(&other.token),
                "the token itself was stored in {file}"
            );
        }
    }

    #[test]
    fn the_same_agent_on_each_machine_has_a_token_of_its_own_that_speaks_for_the_agent() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path());
        let devbox = engine.issue_agent_token("claude-code@devbox-1").unwrap();
        let runner = engine.issue_agent_token("claude-code@ci-runner").unwrap();
        assert_eq!(devbox.agent, "claude-code@devbox-1");
        for token in [&devbox.token, &runner.token] {
            assert_eq!(
                engine.agent_for_token(token).unwrap().as_deref(),
                Some("claude-code"),
                "each machine's token speaks for the agent"
            );
        }
        assert!(engine.revoke_agent_token("claude-code@devbox-1").unwrap());
        assert_eq!(engine.agent_for_token(&devbox.token).unwrap(), None);
        assert_eq!(
            engine.agent_for_token(&runner.token).unwrap().as_deref(),
            Some("claude-code"),
            "revoking one machine's token leaves the other's"
        );
        for bad in [
            "claude-code@",
            "@devbox",
            "claude-code@a@b",
            "claude-code@Devbox",
        ] {
            assert!(engine.issue_agent_token(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_hook_url_needs_a_hook_agent_and_a_port() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine(dir.path());
        assert_eq!(
            engine.issue_agent_token("claude-code").unwrap().hook_url,
            None
        );
        engine.set_agent_hook_port(23456).unwrap();
        assert_eq!(
            engine
                .issue_agent_token("claude-code")
                .unwrap()
                .hook_url
                .as_deref(),
            Some("http://127.0.0.1:23456/v1/agent-calls/hook/claude-code")
        );
        assert_eq!(
            engine.issue_agent_token("my-sdk-app").unwrap().hook_url,
            None
        );
        for bad in ["", "Claude", "-x", "a b", "a/b", &"x".repeat(65)] {
            assert!(engine.issue_agent_token(bad).is_err(), "{bad:?}");
        }
    }
}
