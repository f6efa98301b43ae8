//! What the engine announces: inbox changes, session status, streamed text, turn ends.

use airlock_core::{ApprovalStatus, ItemKind, SessionStatus, TurnStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One pending item of the inbox, as every channel shows it (`inbox --json` prints these).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct InboxItem {
    pub approval_id: String,
    pub tool_call_id: Option<String>,
    pub kind: ItemKind,
    pub session: String,
    pub session_id: String,
    pub server: String,
    pub tool: String,
    pub args: Value,
    pub args_hash: String,
    pub why: String,
    pub created_at: String,
    pub expires_at: Option<String>,
    /// The tool's description and input schema, so a channel can show and check an edit.
    pub description: Option<String>,
    pub input_schema: Option<Value>,
    /// Elicitations: the server's message and the requested form (JSON Schema).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<Value>,
    /// Whether an edited input can run instead: `available_decisions` holds `edit` (kept for
    /// readers of `inbox --json` that look for it).
    #[serde(default)]
    pub editable: bool,
    /// The decisions it accepts, and so the only ones a channel offers (Codex's
    /// `available_decisions`): an elicitation's accept/decline/cancel, an edit only where an
    /// edit can run, a grant only where a later call could use it.
    #[serde(default)]
    pub available_decisions: Vec<crate::DecisionKind>,
    /// Agent tool calls: the agent (`claude-code`, `codex`, `mcp-client`), the MCP client's
    /// name, the agent's session id and its working folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_session: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
}

/// How a turn ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct TurnOutcome {
    pub session: String,
    pub status: TurnStatus,
    pub answer: Option<String>,
    pub error: Option<String>,
}

/// One decided item of an [`EngineEvent::ApprovalsDecided`].
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DecidedItem {
    pub approval_id: String,
    pub session: String,
    pub approve: bool,
    /// How it left the inbox: approved, denied, expired or cancelled.
    pub status: ApprovalStatus,
    pub decided_by: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum EngineEvent {
    ApprovalRequested {
        item: Box<InboxItem>,
    },
    /// One event per batch of decisions (one for a single decision), so that approving ten
    /// thousand items is one inbox update, not ten thousand.
    ApprovalsDecided {
        decisions: Vec<DecidedItem>,
    },
    SessionStatus {
        session: String,
        status: SessionStatus,
    },
    TextDelta {
        session: String,
        text: String,
    },
    /// A piece of a hosted agent's thinking (ACP `agent_thought_chunk`): shown apart from its
    /// answer, never sent on as what it said.
    ThoughtDelta {
        session: String,
        text: String,
    },
    ToolFinished {
        session: String,
        tool_call_id: String,
        state: String,
    },
    TurnEnded {
        outcome: TurnOutcome,
    },
    /// The disk refused to record a decision: Airlock decides nothing more until restarted.
    StorageFailed {
        reason: String,
    },
    /// "Pause all agents" was switched (see `Engine::set_paused`).
    Paused {
        paused: bool,
    },
    /// The phone inbox was switched on (where it listens) or off.
    RemoteChanged {
        listen: Option<String>,
    },
    /// A paired device was revoked: its open event streams end at once.
    DeviceRevoked {
        device_id: String,
    },
    /// A server was added, changed, enabled, disabled or removed, or its state changed
    /// (starting, ready, failed): whoever shows the servers reads them again.
    ServersChanged {
        server: String,
    },
}
