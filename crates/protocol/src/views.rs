//! The engine's views of tools and servers.

use airlock_core::{ServerDefault, ToolSetting};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool with its setting and what applies after defaults (`airlock tools`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ToolView {
    pub server: String,
    pub tool: String,
    pub model_name: String,
    pub description: String,
    pub setting: ToolSetting,
    pub effective: ToolSetting,
    pub read_only_hint: bool,
    /// The person's choice of whether a notification may approve this tool (`None`: the
    /// server's choice or the default applies).
    #[serde(default)]
    pub from_notification: Option<bool>,
    /// Whether a notification may approve this tool, after the server's choice and the default
    /// (tools declared read-only by a trusted source).
    #[serde(default)]
    pub approvable_from_notification: bool,
    /// False for a tool no notification may approve whatever the person sets (one that runs
    /// any command it is given).
    #[serde(default)]
    pub may_allow_from_notification: bool,
    /// MCP annotations, shown as the server's claims.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<Value>,
}

/// How a server is doing right now.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
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
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ServerView {
    pub name: String,
    pub kind: String,
    pub default: ServerDefault,
    pub trust_read_only_hints: bool,
    /// The person's choice of whether a notification may approve this server's tools (`None`:
    /// only tools declared read-only by a trusted source).
    #[serde(default)]
    pub from_notification: Option<bool>,
    pub enabled: bool,
    pub config: Value,
    pub status: Option<ServerStatus>,
    /// Tools whose definition changed since the person reviewed them (their grants are
    /// suspended until `accept_server_changes`).
    pub changed_tools: usize,
}

/// A tool whose definition changed since the person last reviewed it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ToolChange {
    pub server: String,
    pub tool: String,
    /// What changed, in words ("description changed", "the server definition … changed").
    pub change: String,
    /// The definition (description, input schema, annotations) as reviewed, and as now.
    pub before: Value,
    pub after: Value,
}

/// What is on disk where a pending file write would write, so the write can be shown as a diff
/// against it (`file_on_disk`). Read only beneath the folder the writer works in (the
/// workspace, or the agent's folder), never through a link that leads out of it, and only up to
/// a bound: anything else is `not_shown` with the reason.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum FileOnDisk {
    /// Nothing is there: the write creates the file.
    Missing { path: String },
    /// The file's text as it is now.
    Text { path: String, content: String },
    /// The file is not read or not shown, and why (too large, not text, outside the folder).
    NotShown { path: String, why: String },
}
