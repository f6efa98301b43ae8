//! Tool servers as the person manages them: definitions and settings live in the store; the
//! [`ServerHost`] (the MCP client manager, attached by whoever runs the engine) starts them and
//! reports how they are doing.

use crate::tools::ToolSource;
use crate::{DecisionRequest, Engine, EngineError, EngineEvent, Result};
use airlock_core::{
    BUILTIN_SERVER, DecidedBy, ItemKind, ServerConfig, ServerDefault, validate_server_name,
};
use airlock_protocol::{ServerStatus, ServerView, ToolChange};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The most a log tail reads from the end of a log, so a huge log costs what a small one does.
pub const LOG_TAIL_MAX_BYTES: u64 = 64 * 1024;

/// Runs the servers defined in the store. Implemented by the MCP client manager.
pub trait ServerHost: Send + Sync {
    fn status(&self, name: &str) -> Option<ServerStatus>;
    /// (Re)starts or stops one server after its definition or `enabled` changed.
    fn reload(&self, name: &str);
}

impl Engine {
    pub fn set_server_host(&self, host: Arc<dyn ServerHost>) {
        *self
            .inner
            .server_host
            .write()
            .unwrap_or_else(|p| p.into_inner()) = Some(host);
    }

    fn server_host(&self) -> Option<Arc<dyn ServerHost>> {
        self.inner
            .server_host
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Offers a server's tools to the model (again), e.g. when it is ready or its list changed.
    pub fn register_tools(&self, server: &str, source: Arc<dyn ToolSource>) {
        self.inner.tools.register(server, source);
        self.inner.invalidate_policy();
    }

    pub fn unregister_tools(&self, server: &str) {
        self.inner.tools.unregister(server);
    }

    /// Says that a server's state changed (called by the server host as it starts, fails and
    /// restarts servers).
    pub fn announce_server_change(&self, server: &str) {
        self.inner.emit(EngineEvent::ServersChanged {
            server: server.to_string(),
        });
    }

    /// Drops the cached policy after settings or pins changed outside the engine's own paths.
    pub fn settings_changed(&self) {
        self.inner.invalidate_policy();
    }

    pub fn servers(&self) -> Result<Vec<ServerView>> {
        let host = self.server_host();
        let policy = self.inner.policy()?;
        let mut changed: std::collections::HashMap<String, usize> =
            std::collections::HashMap::new();
        for (server, _, _) in self.inner.store.suspended_tools()? {
            *changed.entry(server).or_default() += 1;
        }
        Ok(self
            .inner
            .store
            .servers()?
            .into_iter()
            .map(|row| {
                let kind = if row.name == BUILTIN_SERVER {
                    "builtin".to_string()
                } else {
                    serde_json::from_value::<ServerConfig>(row.config.clone())
                        .map(|c| c.kind().to_string())
                        .unwrap_or_else(|_| "unknown".into())
                };
                let status = match (&host, row.name.as_str()) {
                    (_, BUILTIN_SERVER) => None,
                    (Some(host), name) => host.status(name),
                    (None, _) => None,
                };
                ServerView {
                    from_notification: policy.from_notification_choice(&row.name, None),
                    changed_tools: changed.get(&row.name).copied().unwrap_or(0),
                    name: row.name,
                    kind,
                    default: row.default,
                    trust_read_only_hints: row.trust_read_only_hints,
                    enabled: row.enabled,
                    config: row.config,
                    status,
                }
            })
            .collect())
    }

    /// The definitions of every enabled MCP server.
    pub fn server_configs(&self) -> Result<Vec<(String, ServerConfig, bool)>> {
        Ok(self
            .inner
            .store
            .servers()?
            .into_iter()
            .filter(|row| row.name != BUILTIN_SERVER)
            .filter_map(|row| {
                serde_json::from_value::<ServerConfig>(row.config)
                    .ok()
                    .map(|c| (row.name, c, row.enabled))
            })
            .collect())
    }

    /// Adds a server (asking by default) or replaces its definition, then (re)starts it.
    pub fn add_server(&self, name: &str, config: ServerConfig) -> Result<()> {
        validate_server_name(name).map_err(EngineError::Invalid)?;
        if name == BUILTIN_SERVER {
            return Err(EngineError::Invalid(format!(
                "'{BUILTIN_SERVER}' is the built-in server's name"
            )));
        }
        config
            .validate()
            .map_err(|e| EngineError::Invalid(format!("server '{name}': {e}")))?;
        let value =
            serde_json::to_value(&config).map_err(|e| EngineError::Invalid(e.to_string()))?;
        self.inner
            .store
            .upsert_server(name, &value, &config.definition_hash())?;
        self.inner.invalidate_policy();
        self.restart_server(name);
        Ok(())
    }

    pub fn set_server_default(&self, name: &str, default: ServerDefault) -> Result<()> {
        self.inner.store.set_server_default(name, default)?;
        self.inner.invalidate_policy();
        self.announce_server_change(name);
        Ok(())
    }

    pub fn set_server_trust(&self, name: &str, trust_read_only_hints: bool) -> Result<()> {
        self.inner
            .store
            .set_server_trust(name, trust_read_only_hints)?;
        self.inner.invalidate_policy();
        self.announce_server_change(name);
        Ok(())
    }

    /// Where a stdio server's stderr goes (the MCP manager writes it; Settings shows its tail).
    pub fn server_log_path(&self, name: &str) -> PathBuf {
        self.data_dir().join("logs").join(format!("{name}.log"))
    }

    /// The last `lines` lines of a server's log, reading at most [`LOG_TAIL_MAX_BYTES`] from its
    /// end; empty when the server has not written one (yet, or never: HTTP and built-in).
    pub fn server_log_tail(&self, name: &str, lines: usize) -> Result<Vec<String>> {
        self.require_server(name)?;
        let path = self.server_log_path(name);
        read_tail(&path, lines, LOG_TAIL_MAX_BYTES).map_err(|error| EngineError::ServerLog {
            path,
            message: error.to_string(),
        })
    }

    /// What changed in a server's tools since the person last reviewed them (their grants are
    /// suspended until then), with the definition as reviewed and as offered now.
    pub fn server_changes(&self, name: &str) -> Result<Vec<ToolChange>> {
        self.require_server(name)?;
        Ok(self
            .inner
            .store
            .tool_changes(name)?
            .into_iter()
            .map(|(tool, change, before, after)| ToolChange {
                server: name.to_string(),
                tool,
                change,
                before,
                after,
            })
            .collect())
    }

    /// The person reviewed the server's changed tools as listed by [`Engine::server_changes`]
    /// and accepts exactly those: the definitions are pinned anew and the grants apply again.
    /// When the server changed its tools once more since `reviewed` was shown, nothing is
    /// accepted. Approving a call never does this; it runs that call only.
    pub fn accept_server_changes(
        &self,
        name: &str,
        reviewed: &[ToolChange],
    ) -> Result<Vec<ToolChange>> {
        let changes = self.server_changes(name)?;
        if changes != reviewed {
            return Err(EngineError::Stale(format!(
                "the tools of '{name}' changed again since they were shown; review them again"
            )));
        }
        for change in &changes {
            self.inner.store.accept_pin(name, &change.tool)?;
        }
        if !changes.is_empty() {
            self.inner.invalidate_policy();
            self.announce_server_change(name);
        }
        Ok(changes)
    }

    /// Removes a server: stops it, forgets what was set and remembered for its tools (see the
    /// store), and denies the calls still waiting on it, since none of them can run any more.
    /// Returns how many were denied (one decided meanwhile by someone else is not counted).
    pub fn remove_server(&self, name: &str) -> Result<usize> {
        if name == BUILTIN_SERVER {
            return Err(EngineError::Invalid(
                "the built-in server cannot be removed".into(),
            ));
        }
        self.require_server(name)?;
        self.inner.store.remove_server(name)?;
        self.inner.invalidate_policy();
        self.restart_server(name);
        // Its questions (elicitations) end with its connection, cancelled; only calls are denied.
        let denials: Vec<DecisionRequest> = self
            .inbox()?
            .into_iter()
            .filter(|item| item.server == name && item.kind != ItemKind::Elicitation)
            .map(|item| {
                DecisionRequest::deny(
                    item.approval_id,
                    Some(format!(
                        "The MCP server '{name}' was removed, so this call cannot run."
                    )),
                )
            })
            .collect();
        if denials.is_empty() {
            return Ok(0);
        }
        let outcomes = self.decide_many(denials, DecidedBy::Engine)?;
        Ok(outcomes.iter().filter(|outcome| outcome.is_ok()).count())
    }

    pub fn set_server_enabled(&self, name: &str, enabled: bool) -> Result<()> {
        if name == BUILTIN_SERVER {
            return Err(EngineError::Invalid(
                "the built-in server cannot be disabled".into(),
            ));
        }
        self.inner.store.set_server_enabled(name, enabled)?;
        self.restart_server(name);
        Ok(())
    }

    /// (Re)starts or stops a server after its definition, `enabled` or existence changed, and
    /// says so. Without a host (no MCP manager attached) its tools are only taken away.
    fn restart_server(&self, name: &str) {
        match self.server_host() {
            Some(host) => host.reload(name),
            None => self.unregister_tools(name),
        }
        self.announce_server_change(name);
    }

    pub(crate) fn require_server(&self, name: &str) -> Result<()> {
        if self
            .inner
            .store
            .servers()?
            .iter()
            .any(|row| row.name == name)
        {
            Ok(())
        } else {
            Err(EngineError::UnknownServer(name.to_string()))
        }
    }
}

/// The last `lines` lines of a file from its last `max_bytes` bytes; a line cut by that bound is
/// left out rather than shown in part. A missing file has no lines.
fn read_tail(path: &Path, lines: usize, max_bytes: u64) -> std::io::Result<Vec<String>> {
    let mut file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(error) => return Err(error),
    };
    let start = file.metadata()?.len().saturating_sub(max_bytes);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(max_bytes).read_to_end(&mut bytes)?;
    let text = String::from_utf8_lossy(&bytes);
    let mut all: Vec<&str> = text.lines().collect();
    if start > 0 && !all.is_empty() {
        all.remove(0);
    }
    let skip = all.len().saturating_sub(lines);
    Ok(all[skip..].iter().map(|line| line.to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EngineConfig;
    use airlock_core::ServerConfig;
    use std::io::Write;

    fn engine_with_server(dir: &Path) -> Engine {
        let engine = Engine::open(EngineConfig {
            data_dir: dir.to_path_buf(),
            workspace: Some(dir.join("workspace")),
        })
        .unwrap();
        let config = ServerConfig::Stdio {
            command: "true".into(),
            args: vec![],
            env: Default::default(),
            cwd: None,
        };
        engine.add_server("notes", config).unwrap();
        engine
    }

    #[test]
    fn log_tail_shows_the_last_lines_of_the_servers_log() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine_with_server(dir.path());
        assert!(
            engine.server_log_tail("notes", 10).unwrap().is_empty(),
            "no log yet"
        );
        let path = engine.server_log_path("notes");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let mut log = std::fs::File::create(&path).unwrap();
        for n in 1..=30 {
            writeln!(log, "line {n}").unwrap();
        }
        write!(log, "last, unfinished").unwrap();
        let tail = engine.server_log_tail("notes", 3).unwrap();
        assert_eq!(tail, ["line 29", "line 30", "last, unfinished"]);
        assert_eq!(engine.server_log_tail("notes", 100).unwrap().len(), 31);
        // The built-in server writes no log: nothing to show, not an error.
        assert!(
            engine
                .server_log_tail(BUILTIN_SERVER, 10)
                .unwrap()
                .is_empty()
        );
    }

    #[test]
    fn log_tail_reads_a_bounded_end_of_a_big_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.log");
        let line = "x".repeat(99);
        // 1,000 bytes hold 10 lines of 100 bytes; the first is cut by the bound and left out.
        std::fs::write(
            &path,
            format!("{}{}", format!("{line}\n").repeat(10_000), "end\n"),
        )
        .unwrap();
        let tail = read_tail(&path, 1_000_000, 1_000).unwrap();
        assert_eq!(tail.last().map(String::as_str), Some("end"));
        assert!(
            tail.len() <= 10 && tail[..tail.len() - 1].iter().all(|l| *l == line),
            "{tail:?}"
        );
    }

    #[test]
    fn log_tail_of_an_unknown_server_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let engine = engine_with_server(dir.path());
        let error = engine.server_log_tail("nope", 10).unwrap_err();
        assert!(
            matches!(&error, EngineError::UnknownServer(name) if name == "nope"),
            "{error}"
        );
        assert_eq!(error.to_string(), "no server named 'nope'");
    }
}
