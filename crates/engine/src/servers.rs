//! Tool servers as the person manages them: definitions and settings live in the store; the
//! [`ServerHost`] (the MCP client manager, attached by whoever runs the engine) starts them and
//! reports how they are doing.

use crate::{Engine, EngineError, Result};
use crate::tools::ToolSource;
use airlock_core::{BUILTIN_SERVER, ServerConfig, ServerDefault, validate_server_name};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;

/// How a server is doing right now.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerStatus {
    /// `starting`, `ready`, `failed` (see `reason`; restarted with backoff) or `disabled`.
    pub state: String,
    pub reason: Option<String>,
    pub pid: Option<u32>,
    pub tools: usize,
    pub restarts: u32,
    /// Where the server's stderr goes (stdio servers).
    pub log: Option<String>,
    /// Tools not offered to the model, with why (e.g. a name models cannot take).
    #[serde(default)]
    pub skipped_tools: Vec<String>,
}

/// A server with its settings and status (`airlock servers`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ServerView {
    pub name: String,
    pub kind: String,
    pub default: ServerDefault,
    pub trust_read_only_hints: bool,
    pub enabled: bool,
    pub config: Value,
    pub status: Option<ServerStatus>,
}

/// Runs the servers defined in the store. Implemented by the MCP client manager.
pub trait ServerHost: Send + Sync {
    fn status(&self, name: &str) -> Option<ServerStatus>;
    /// (Re)starts or stops one server after its definition or `enabled` changed.
    fn reload(&self, name: &str);
}

impl Engine {
    pub fn set_server_host(&self, host: Arc<dyn ServerHost>) {
        *self.inner.server_host.write().unwrap_or_else(|p| p.into_inner()) = Some(host);
    }

    fn server_host(&self) -> Option<Arc<dyn ServerHost>> {
        self.inner.server_host.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Offers a server's tools to the model (again), e.g. when it is ready or its list changed.
    pub fn register_tools(&self, server: &str, source: Arc<dyn ToolSource>) {
        self.inner.tools.register(server, source);
        self.inner.invalidate_policy();
    }

    pub fn unregister_tools(&self, server: &str) {
        self.inner.tools.unregister(server);
    }

    /// Drops the cached policy after settings or pins changed outside the engine's own paths.
    pub fn settings_changed(&self) {
        self.inner.invalidate_policy();
    }

    pub fn servers(&self) -> Result<Vec<ServerView>> {
        let host = self.server_host();
        Ok(self
            .inner
            .store
            .servers()?
            .into_iter()
            .map(|row| {
                let kind = if row.name == BUILTIN_SERVER {
                    "builtin".to_string()
                } else {
                    serde_json::from_value::<ServerConfig>(row.config.clone()).map(|c| c.kind().to_string()).unwrap_or_else(|_| "unknown".into())
                };
                let status = match (&host, row.name.as_str()) {
                    (_, BUILTIN_SERVER) => None,
                    (Some(host), name) => host.status(name),
                    (None, _) => None,
                };
                ServerView {
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
            .filter_map(|row| serde_json::from_value::<ServerConfig>(row.config).ok().map(|c| (row.name, c, row.enabled)))
            .collect())
    }

    /// Adds a server (asking by default) or replaces its definition, then (re)starts it.
    pub fn add_server(&self, name: &str, config: ServerConfig) -> Result<()> {
        validate_server_name(name).map_err(EngineError::Invalid)?;
        if name == BUILTIN_SERVER {
            return Err(EngineError::Invalid(format!("'{BUILTIN_SERVER}' is the built-in server's name")));
        }
        let value = serde_json::to_value(&config).map_err(|e| EngineError::Invalid(e.to_string()))?;
        self.inner.store.upsert_server(name, &value, &config.definition_hash())?;
        self.inner.invalidate_policy();
        if let Some(host) = self.server_host() {
            host.reload(name);
        }
        Ok(())
    }

    pub fn set_server_default(&self, name: &str, default: ServerDefault) -> Result<()> {
        self.inner.store.set_server_default(name, default)?;
        self.inner.invalidate_policy();
        Ok(())
    }

    pub fn set_server_trust(&self, name: &str, trust_read_only_hints: bool) -> Result<()> {
        self.inner.store.set_server_trust(name, trust_read_only_hints)?;
        self.inner.invalidate_policy();
        Ok(())
    }

    pub fn set_server_enabled(&self, name: &str, enabled: bool) -> Result<()> {
        if name == BUILTIN_SERVER {
            return Err(EngineError::Invalid("the built-in server cannot be disabled".into()));
        }
        self.inner.store.set_server_enabled(name, enabled)?;
        if let Some(host) = self.server_host() {
            host.reload(name);
        }
        Ok(())
    }
}
