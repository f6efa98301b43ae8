//! The model providers a person sets: their kinds, and what `airlock provider set` stores.
//! The engine's registry (`engine/src/provider.rs`) builds each kind.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The wire format a provider speaks.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "kebab-case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ProviderKind {
    /// OpenAI-compatible Chat Completions (`/chat/completions`).
    #[default]
    OpenaiChat,
    /// OpenAI Responses API (`/responses`), with hosted remote MCP tools.
    OpenaiResponses,
    /// Anthropic Messages API (`/messages`).
    Anthropic,
}

/// A provider kind as a person picks it: the name the CLI and the API take, and the Settings
/// screen's label.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProviderKindInfo {
    pub kind: ProviderKind,
    pub name: &'static str,
    pub label: &'static str,
}

/// A remote MCP server an OpenAI Responses provider calls itself (`{"type": "mcp", ...}`).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct HostedMcpServer {
    pub server_label: String,
    pub server_url: String,
    /// `"always"`, `"never"`, or the API's object form; Airlock's default is `"always"`.
    #[serde(default = "always")]
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub require_approval: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_tools: Option<Vec<String>>,
}

fn always() -> Value {
    json!("always")
}

/// What `airlock provider set` stores.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ProviderSettings {
    /// `None`: the default provider; otherwise one of the named providers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default)]
    pub kind: ProviderKind,
    pub base_url: String,
    pub model: String,
    /// The name of the environment variable that holds the API key (never the key itself).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The API key is in the OS keyring (pasted in the window; never in the store). A named
    /// variable wins over it.
    #[serde(default)]
    pub api_key_in_keyring: bool,
    #[serde(default = "default_stream")]
    pub stream: bool,
    /// OpenAI Responses only: remote MCP servers the provider calls itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "ts", ts(type = "Array<unknown>", optional))]
    pub hosted_mcp: Vec<HostedMcpServer>,
    /// Anthropic only: `max_tokens` of each request (default 4096).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
    /// Retries after the first try on 429, 5xx, timeouts and connection errors (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_retries: Option<u32>,
    /// Seconds to wait for an answer to start, and of silence inside a stream (default 120).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
}

impl Default for ProviderSettings {
    fn default() -> Self {
        Self {
            name: None,
            kind: ProviderKind::default(),
            base_url: String::new(),
            model: String::new(),
            api_key_env: None,
            api_key_in_keyring: false,
            stream: true,
            hosted_mcp: Vec::new(),
            max_tokens: None,
            max_retries: None,
            timeout_secs: None,
        }
    }
}

fn default_stream() -> bool {
    true
}
