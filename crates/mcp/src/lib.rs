//! The MCP client manager: every MCP server defined in the store becomes a [`ToolSource`] of
//! the engine, so its tools go through the same policy, approvals and loop as the built-in ones.
//!
//! Built on the official Rust SDK (`rmcp`): stdio servers (a child process; stderr to a
//! per-server log) and streamable-HTTP servers. Each server has a supervisor task that connects,
//! lists the tools (all pages, again on `list_changed`), pins their definitions (rug-pull guard),
//! and restarts the server with backoff when it dies.
//!
//! [`ToolSource`]: airlock_engine::tools::ToolSource

mod client;
mod connect;
pub mod oauth;
pub mod proxy;
mod source;
mod supervisor;
mod wider;

pub use supervisor::SIGN_IN_NEEDED;

use airlock_engine::{Engine, ServerHost, ServerStatus};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::watch;

/// Default time a tool call may take before it is cancelled (setting `tool_timeout_secs`).
pub const DEFAULT_TOOL_TIMEOUT_SECS: u64 = 60;

/// A tool's definition as it is pinned (rug-pull guard): what the model is told about it.
/// The same shape whether Airlock runs the server or `airlock mcp-proxy` does.
pub(crate) fn listed_definition(tool: &rmcp::model::Tool) -> serde_json::Value {
    serde_json::json!({
        "description": tool.description.as_deref().unwrap_or_default(),
        "input_schema": serde_json::Value::Object((*tool.input_schema).clone()),
        "annotations": tool
            .annotations
            .as_ref()
            .and_then(|a| serde_json::to_value(a).ok())
            .unwrap_or(serde_json::Value::Null),
    })
}

/// One running supervisor.
struct Slot {
    status: Arc<Mutex<ServerStatus>>,
    stop: watch::Sender<bool>,
}

/// Starts, watches and restarts the engine's MCP servers.
pub struct McpManager {
    engine: Engine,
    slots: Mutex<HashMap<String, Slot>>,
}

impl std::fmt::Debug for McpManager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpManager").finish_non_exhaustive()
    }
}

impl McpManager {
    /// Attaches the manager to the engine and starts every enabled server. Needs a tokio runtime.
    pub fn start(engine: &Engine) -> Arc<Self> {
        let manager = Arc::new(Self {
            engine: engine.clone(),
            slots: Mutex::new(HashMap::new()),
        });
        engine.set_server_host(manager.clone());
        match engine.server_configs() {
            Ok(configs) => {
                for (name, _, _) in configs {
                    manager.reload(&name);
                }
            }
            Err(error) => tracing::error!(%error, "cannot read the MCP servers"),
        }
        manager
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<String, Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The processes of the servers that run now (stdio servers that are ready).
    pub fn pids(&self) -> Vec<u32> {
        self.slots()
            .values()
            .filter_map(|slot| slot.status.lock().unwrap_or_else(|p| p.into_inner()).pid)
            .collect()
    }

    /// Stops every server (their processes are killed).
    pub fn stop_all(&self) {
        for (_, slot) in self.slots().drain() {
            let _ = slot.stop.send(true);
        }
    }
}

fn disabled() -> ServerStatus {
    ServerStatus {
        state: "disabled".into(),
        reason: None,
        pid: None,
        tools: 0,
        restarts: 0,
        log: None,
        skipped_tools: Vec::new(),
    }
}

impl ServerHost for McpManager {
    fn status(&self, name: &str) -> Option<ServerStatus> {
        let slots = self.slots();
        Some(match slots.get(name) {
            Some(slot) => slot
                .status
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone(),
            None => disabled(),
        })
    }

    fn reload(&self, name: &str) {
        if let Some(old) = self.slots().remove(name) {
            let _ = old.stop.send(true);
        }
        self.engine.unregister_tools(name);
        let config = match self.engine.server_configs() {
            Ok(configs) => configs.into_iter().find(|(n, _, _)| n == name),
            Err(error) => {
                tracing::error!(%error, server = name, "cannot read the server definition");
                None
            }
        };
        let Some((_, config, true)) = config else {
            return;
        };
        let log = match &config {
            airlock_core::ServerConfig::Stdio { .. } => Some(self.engine.server_log_path(name)),
            airlock_core::ServerConfig::Http { .. } => None,
        };
        let status = Arc::new(Mutex::new(ServerStatus {
            state: "starting".into(),
            reason: None,
            pid: None,
            tools: 0,
            restarts: 0,
            log: log.as_ref().map(|p| p.display().to_string()),
            skipped_tools: Vec::new(),
        }));
        let (stop, stop_rx) = watch::channel(false);
        let supervisor = supervisor::Supervisor {
            engine: self.engine.clone(),
            name: name.to_string(),
            config,
            log,
            status: status.clone(),
        };
        tokio::spawn(supervisor.run(stop_rx));
        self.slots().insert(name.to_string(), Slot { status, stop });
    }
}
