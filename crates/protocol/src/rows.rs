//! What Airlock keeps, as every channel sees it: sessions, messages with their tool calls,
//! approval requests, the audit trail, servers, rules and remembered decisions. The store
//! fills these from its tables; the engine hands them out.

use airlock_core::policy::{Remembered, Step};
use airlock_core::{
    ApprovalStatus, ArgRule, CallState, ItemKind, Mode, ServerDefault, SessionStatus,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SessionRow {
    pub id: String,
    pub name: String,
    pub mode: Option<Mode>,
    pub status: SessionStatus,
    pub last_error: Option<String>,
    pub created_at: String,
    pub updated_at: String,
    /// What a person reads when `name` is a key: an agent's session as its folder and first
    /// prompt ("airlock: fix the failing test"). `None`: the name is the title.
    pub title: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MessageRow {
    pub id: i64,
    pub session_id: String,
    pub role: String,
    pub content: String,
    pub created_at: String,
    pub calls: Vec<CallRow>,
    /// What a hosted agent thought before this message's answer (ACP `agent_thought_chunk`),
    /// kept apart from `content` so that it is never read as the answer.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub thought: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CallRow {
    pub id: String,
    pub session_id: String,
    pub message_id: i64,
    pub position: i64,
    pub provider_call_id: String,
    pub model_name: String,
    pub server: String,
    pub tool: String,
    pub raw_args: String,
    pub args: Option<Value>,
    pub args_hash: Option<String>,
    pub state: CallState,
    pub policy_step: Option<Step>,
    pub policy_why: Option<String>,
    pub run_args: Option<Value>,
    pub result: Option<Value>,
    pub created_at: String,
    pub updated_at: String,
    /// A call that may run (allowed, approved, started) runs after the earlier calls of its
    /// step: how many of those are not yet decided and run, or denied ("approved — runs after
    /// 2 earlier calls"); 0 for every other call.
    pub runs_after: u32,
    /// The approval of this call made a grant: what it covers ("for 15 min, builtin/run_command
    /// with commands starting `git status` in this chat").
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub grant: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AuditRow {
    pub id: i64,
    pub at: String,
    pub actor: String,
    pub action: String,
    pub session_id: Option<String>,
    pub tool_call_id: Option<String>,
    pub approval_id: Option<String>,
    pub detail: Value,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ServerRow {
    pub name: String,
    pub default: ServerDefault,
    pub trust_read_only_hints: bool,
    pub enabled: bool,
    pub config: Value,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RuleRow {
    pub rule: ArgRule,
    pub created_at: String,
}

/// What adding a rule did: the rule now in force, and whether an identical one (same tool,
/// pointer, pattern and effect) was there already, in which case nothing changed and `rule` is
/// that one.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AddedRule {
    #[serde(flatten)]
    pub rule: ArgRule,
    pub already_existed: bool,
    /// The calls waiting now that this allow rule covers. The rule does not decide them (the
    /// person has not approved them): Insights lists them, each shown, to approve in one click.
    pub covers_waiting: Vec<crate::InboxItem>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RememberedRow {
    pub entry: Remembered,
    pub created_at: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ApprovalRow {
    pub approval_id: String,
    pub tool_call_id: Option<String>,
    pub session_id: String,
    pub session: String,
    pub kind: ItemKind,
    pub server: String,
    pub tool: String,
    pub args: Value,
    pub args_hash: String,
    pub why: String,
    pub status: ApprovalStatus,
    pub created_at: String,
    pub expires_at: Option<String>,
    /// Agent tool calls only: who asked, from where.
    pub agent: Option<AgentOrigin>,
}

/// Where an agent tool call comes from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AgentOrigin {
    pub agent: String,
    pub client: Option<String>,
    pub agent_session: String,
    pub cwd: Option<String>,
    pub editable: bool,
    /// Posted in the deferred style (`AgentCall::defer`): it stays without a waiter and across
    /// restarts, and its decision is collected later.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(skip))]
    pub deferred: bool,
}
