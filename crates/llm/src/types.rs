//! Provider-neutral messages, tool specs and replies.

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::Duration;

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ChatMessage {
    pub role: Role,
    pub content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ModelToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// A tool result that reports a failure or a denial (Anthropic's `is_error`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// In an assistant message: the approvals the provider asked for before running its own
    /// tools (OpenAI Responses `mcp_approval_request`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub approval_requests: Vec<ProviderApprovalRequest>,
    /// In a tool message: the person's answer to a provider's approval request, whose id is
    /// `tool_call_id` (sent as `mcp_approval_response`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval: Option<ApprovalAnswer>,
}

impl ChatMessage {
    fn new(role: Role, content: Option<String>) -> Self {
        Self {
            role,
            content,
            tool_calls: Vec::new(),
            tool_call_id: None,
            is_error: false,
            approval_requests: Vec::new(),
            approval: None,
        }
    }

    pub fn system(text: impl Into<String>) -> Self {
        Self::new(Role::System, Some(text.into()))
    }

    pub fn user(text: impl Into<String>) -> Self {
        Self::new(Role::User, Some(text.into()))
    }

    pub fn assistant(text: Option<String>, tool_calls: Vec<ModelToolCall>) -> Self {
        Self {
            tool_calls,
            ..Self::new(Role::Assistant, text)
        }
    }

    pub fn tool_result(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(call_id.into()),
            ..Self::new(Role::Tool, Some(content.into()))
        }
    }

    /// A tool result for a call that failed or was denied.
    pub fn tool_error(call_id: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            is_error: true,
            ..Self::tool_result(call_id, content)
        }
    }

    /// The answer to a provider's approval request `approval_request_id`.
    pub fn approval_answer(
        approval_request_id: impl Into<String>,
        approve: bool,
        reason: Option<String>,
    ) -> Self {
        Self {
            tool_call_id: Some(approval_request_id.into()),
            approval: Some(ApprovalAnswer {
                approve,
                reason,
                outcome: None,
            }),
            ..Self::new(Role::Tool, None)
        }
    }
}

/// A provider asks before it runs one of its own tools (a hosted MCP server's tool). Airlock
/// never runs it; it only answers.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProviderApprovalRequest {
    /// The provider's id of the request, echoed back as `approval_request_id`.
    pub id: String,
    pub server_label: String,
    pub name: String,
    /// The arguments' JSON text as the provider sent it.
    pub arguments: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ApprovalAnswer {
    pub approve: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What the provider reported after it ran the approved tool, replayed after the answer so
    /// the provider sees the tool already ran and does not run it again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<ProviderToolOutcome>,
}

/// What the provider reports about a tool it ran itself (`mcp_call`), for the audit trail.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ProviderToolOutcome {
    pub id: String,
    /// The approval request this call answers, when it was asked for.
    pub approval_request_id: Option<String>,
    pub server_label: String,
    pub name: String,
    pub arguments: String,
    pub output: Option<String>,
    pub error: Option<Value>,
}

/// A tool call as the model proposed it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ModelToolCall {
    pub id: String,
    pub name: String,
    /// The arguments' JSON text exactly as the model sent it (it may be invalid).
    pub arguments: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

#[derive(Debug, Clone, Default)]
pub struct ChatRequest {
    pub messages: Vec<ChatMessage>,
    pub tools: Vec<ToolSpec>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelReply {
    pub text: String,
    pub tool_calls: Vec<ModelToolCall>,
    pub finish_reason: Option<String>,
    /// Provider-executed tools waiting for a person's answer.
    pub approval_requests: Vec<ProviderApprovalRequest>,
    /// Provider-executed tools the provider ran (or failed to run) in this reply.
    pub provider_outcomes: Vec<ProviderToolOutcome>,
}

/// An API key held in memory: never printed (`Debug` shows `ApiKey(***)`), never serialized.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// `None` for an empty or blank key.
    pub fn new(key: &str) -> Option<Self> {
        let key = key.trim();
        (!key.is_empty()).then(|| Self(key.to_string()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// For example `https://api.openai.com/v1`; requests go to `{base_url}/chat/completions`
    /// (or `/responses`, `/messages`, depending on the provider).
    pub base_url: String,
    pub model: String,
    /// The environment variable holding the API key (a bearer token, or Anthropic's `x-api-key`).
    pub api_key_env: Option<String>,
    /// The API key itself (from the OS keyring); used when no variable is named.
    pub api_key: Option<ApiKey>,
    pub stream: bool,
    /// Retries after the first try, for 429, 5xx, timeouts and connection errors.
    pub max_retries: u32,
    pub request_timeout: Duration,
    /// The longest wait between tries, including one asked for by Retry-After.
    pub max_backoff: Duration,
    /// The first wait between tries; it doubles each time.
    pub initial_backoff: Duration,
}

impl Default for ProviderConfig {
    fn default() -> Self {
        Self {
            base_url: "https://api.openai.com/v1".into(),
            model: "gpt-4o-mini".into(),
            api_key_env: Some("OPENAI_API_KEY".into()),
            api_key: None,
            stream: true,
            max_retries: 4,
            request_timeout: Duration::from_secs(120),
            max_backoff: Duration::from_secs(20),
            initial_backoff: Duration::from_millis(200),
        }
    }
}

/// Receives streamed text as it arrives.
pub type TextSink = dyn Fn(&str) + Send + Sync;

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error(
        "the API key variable {var} is not set (or empty) in the engine's environment; set it, or paste the key in Settings → Model provider instead"
    )]
    MissingApiKey { var: String },
    #[error("the provider refused the request (HTTP {status}): {body}")]
    Status { status: u16, body: String },
    #[error("cannot reach the provider: {0}")]
    Transport(String),
    #[error("the provider's answer is not understood: {0}")]
    Decode(String),
    #[error(
        "the provider's stream was cut off before the answer was complete{}",
        describe_cut(incomplete_tool_calls)
    )]
    StreamCut {
        text_so_far: String,
        incomplete_tool_calls: Vec<String>,
    },
    #[error("the provider reported an error: {0}")]
    Reported(String),
    #[error("the provider did not answer in time")]
    Timeout,
    #[error("gave up after {attempts} tries: {last}")]
    RetriesExhausted { attempts: u32, last: Box<LlmError> },
}

fn describe_cut(calls: &[String]) -> String {
    if calls.is_empty() {
        String::new()
    } else {
        format!(" (incomplete tool calls, not run: {})", calls.join(", "))
    }
}

/// A model behind some wire format.
pub trait ModelProvider: Send + Sync {
    fn complete<'a>(
        &'a self,
        request: &'a ChatRequest,
        on_text: Option<&'a TextSink>,
    ) -> BoxFuture<'a, Result<ModelReply, LlmError>>;
}
