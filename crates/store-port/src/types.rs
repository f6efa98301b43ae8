//! The values the operations take and give.

use crate::Result;
use airlock_core::policy::{GrantPattern, Step};
use airlock_core::{ApprovalStatus, CallState, DecidedBy, ItemKind, RememberScope};
use airlock_protocol::ApprovalRow;
use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone)]
pub struct NewApproval {
    pub approval_id: String,
    pub tool_call_id: Option<String>,
    pub session_id: String,
    pub kind: ItemKind,
    pub server: String,
    pub tool: String,
    pub args: Value,
    pub args_hash: String,
    pub why: String,
    pub expires_at: Option<String>,
}

/// One way a pending item leaves the inbox, as the engine has checked it.
#[derive(Debug, Clone)]
pub struct DecisionInput {
    pub approval_id: String,
    /// When the channel acts within one session, the decision must belong to it.
    pub session_id: Option<String>,
    /// Where the item goes: approved, denied, expired or cancelled.
    pub status: ApprovalStatus,
    pub reason: Option<String>,
    /// Already validated by the engine (schema, deny rules).
    pub edited_args: Option<Value>,
    pub remember: RememberScope,
    /// Remember for the arguments that run only, rather than the whole tool.
    pub remember_exact_args: bool,
    pub for_chat: bool,
    /// A timed or counted grant made with the approval: later calls of the tool in its chats
    /// whose arguments it covers run until it ends.
    pub grant: Option<GrantLimits>,
    pub decided_by: DecidedBy,
    /// The paired device it came from (the phone inbox), named in the audit trail.
    pub device: Option<String>,
    /// The team member who decided (a team server), named in the audit trail.
    pub person: Option<String>,
    /// The engine's reason to refuse this decision, found before the transaction: the refusal
    /// is recorded in the audit trail and changes nothing else.
    pub refusal: Option<String>,
}

impl DecisionInput {
    /// A plain decision: once, no reason, the arguments as shown.
    pub fn new(
        approval_id: impl Into<String>,
        status: ApprovalStatus,
        decided_by: DecidedBy,
    ) -> Self {
        Self {
            approval_id: approval_id.into(),
            session_id: None,
            status,
            reason: None,
            edited_args: None,
            remember: RememberScope::Once,
            remember_exact_args: false,
            for_chat: false,
            grant: None,
            decided_by,
            device: None,
            person: None,
            refusal: None,
        }
    }

    pub fn approve(&self) -> bool {
        self.status == ApprovalStatus::Approved
    }
}

/// A grant made with an approval: how long it lasts (until a time, for a number of calls, or
/// both, whichever ends first) and what it covers (its chat or every chat; a pattern of the
/// arguments, exactly these, or any).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GrantLimits {
    /// RFC 3339, UTC.
    pub expires_at: Option<String>,
    /// Calls after this one.
    pub uses: Option<u32>,
    /// Only the approval's chat (its session), not every chat.
    pub in_chat: bool,
    /// Exactly the arguments that run.
    pub exact_args: bool,
    /// The pattern the arguments must match (with `exact_args` false; `None`: any).
    pub pattern: Option<GrantPattern>,
    /// What it covers as a person reads it; the approved call shows it.
    pub covers: String,
}

#[derive(Debug, Clone)]
pub struct DecisionOutcome {
    pub approval: ApprovalRow,
    pub run_args: Value,
}

/// What one batch of decisions did: each decision's outcome, and the calls it started.
#[derive(Debug)]
pub struct Decided {
    pub outcomes: Vec<Result<DecisionOutcome>>,
    /// Calls now `running` and claimed (`invoked_at` set): the engine invokes each once,
    /// without claiming it again; after a restart they are reported interrupted.
    pub started: Vec<String>,
}

/// Where an agent tool call comes from, kept with its inbox item.
#[derive(Debug, Clone)]
pub struct NewAgentRequest {
    pub request_key: String,
    pub agent: String,
    pub client: Option<String>,
    pub agent_session: String,
    pub cwd: Option<String>,
    pub editable: bool,
    /// Posted in the deferred style: its client collects the decision later.
    pub deferred: bool,
}

/// An agent's last request, for `airlock agents`.
#[derive(Debug, Clone)]
pub struct AgentActivity<'a> {
    pub agent: &'a str,
    pub tool: &'a str,
    pub cwd: Option<&'a str>,
    pub outcome: &'a str,
}

/// An agent's earlier request: its item, and when it was decided (once it was).
#[derive(Debug, Clone)]
pub struct EarlierAgentRequest {
    pub row: ApprovalRow,
    pub decided_at: Option<String>,
}

/// A call as the engine proposes to record it.
#[derive(Debug, Clone)]
pub struct NewCall {
    pub id: String,
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
    /// Set when the call is settled at once (invalid, or denied by policy).
    pub result: Option<Value>,
    /// The counted grant that lets it run: one use is taken in the transaction that records it.
    pub grant_use: Option<String>,
    /// An identical earlier call of the same step (same tool, same arguments) whose approval
    /// request decides this one too: it waits without a request of its own.
    pub same_as: Option<String>,
}

/// One past call of a tool, as History recorded it.
#[derive(Debug, Clone, PartialEq)]
pub struct PastCall {
    pub args: Value,
    /// A person denied it when asked.
    pub denied_by_person: bool,
}

/// One request put to a person, and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct AskedRow {
    pub server: String,
    pub tool: String,
    pub created_at: String,
    /// `None` while it waits.
    pub decided_at: Option<String>,
    /// `approved`, `denied`, `expired`, `cancelled`, `withdrawn`, `pending`.
    pub status: String,
    pub args: Value,
}

/// What comparing a tool's definition with its pin found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PinCheck {
    /// First seen: pinned now.
    New,
    /// Same as pinned (and not suspended).
    Same,
    /// Differs from the pin, or the server's definition changed: what changed.
    Changed(String),
}

/// A decision as stored, for the waiter that needs its content (elicitation answers).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DecisionRow {
    pub approve: bool,
    pub reason: Option<String>,
    pub edited_args: Option<Value>,
}

/// What the store's commits and checkpoints wrote since it was opened: SQLite's own counts.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct WriteCounters {
    /// Committed write transactions.
    pub commits: u64,
    /// Of those, at `synchronous=FULL`: each synced the log before it returned.
    pub durable_commits: u64,
    /// Pages (WAL frames) the commits appended to the log.
    pub pages: u64,
    /// Checkpoints that copied pages from the log into the database file (each syncs both).
    pub checkpoints: u64,
    /// Log pages those checkpoints copied.
    pub checkpointed_pages: u64,
}

impl WriteCounters {
    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &WriteCounters) -> WriteCounters {
        WriteCounters {
            commits: self.commits.saturating_sub(earlier.commits),
            durable_commits: self.durable_commits.saturating_sub(earlier.durable_commits),
            pages: self.pages.saturating_sub(earlier.pages),
            checkpoints: self.checkpoints.saturating_sub(earlier.checkpoints),
            checkpointed_pages: self
                .checkpointed_pages
                .saturating_sub(earlier.checkpointed_pages),
        }
    }
}

/// A member to add, with the hash of the token they were given.
#[derive(Debug, Clone)]
pub struct NewMemberRow {
    pub id: String,
    pub name: String,
    pub role: airlock_protocol::TeamRole,
    pub groups: Vec<String>,
    pub token_hash: String,
}

/// A route to add (its id made by the engine).
#[derive(Debug, Clone)]
pub struct NewRoute {
    pub id: String,
    pub server: String,
    pub tool: String,
    pub pointer: Option<String>,
    pub pattern: Option<String>,
    pub steps: Vec<String>,
    pub quorum: u32,
    pub escalate_after_secs: Option<u64>,
}

/// A routed item: who has it now (`assignee`), the steps it escalates through, its quorum, and
/// when it moves on (`next_at`: the next step, or after the last one its expiry).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemRouting {
    pub approval_id: String,
    pub route_id: Option<String>,
    pub steps: Vec<String>,
    pub step: u32,
    pub assignee: String,
    pub quorum: u32,
    pub escalate_after_secs: Option<u64>,
    pub next_at: Option<String>,
    pub note: Option<String>,
}

impl ItemRouting {
    /// Whether this is the last step (moving on from it is the item's expiry).
    pub fn at_last_step(&self) -> bool {
        self.step as usize + 1 >= self.steps.len()
    }
}

/// A chat hosted by an ACP agent.
#[derive(Debug, Clone, PartialEq)]
pub struct HostedSession {
    pub session_id: String,
    pub agent: String,
    pub folder: String,
    /// The agent's process (its group's leader) while it runs.
    pub pid: Option<u32>,
}

/// What changed of a hosted agent's tool call (its card in the chat): each field that is
/// `Some` replaces what the card showed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HostedCallUpdate {
    pub tool: Option<String>,
    pub args: Option<Value>,
    pub state: Option<CallState>,
    /// What the agent reported it did, or Airlock's refusal.
    pub result: Option<Value>,
}
