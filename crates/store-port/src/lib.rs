//! The store port: every operation the engine asks of its database, as traits by concept, with
//! the types they take and give and the one error type, which carries no backend's type.
//!
//! Two adapters implement it: `airlock-store-sqlite` (the desktop default: one SQLite file, no
//! server) and `airlock-store-postgres` (a team's shared PostgreSQL). Each operation is one
//! transaction in the adapter: what belongs together commits together or not at all.
//!
//! The traits are synchronous. The engine calls its store from its async tasks and from plain
//! functions alike, and SQLite (the default) is a blocking library whose calls take
//! microseconds: an async port would box a future per call and change every call site. The
//! PostgreSQL adapter runs its pooled async client on a runtime of its own and waits for each
//! operation, as a SQLite call waits for its disk.

mod error;
mod types;
pub mod written;

pub use airlock_protocol::{
    ApprovalRow, AuditRow, CallRow, MessageRow, RememberedRow, RuleRow, ServerRow, SessionRow,
};
pub use error::{Result, StoreError};
pub use types::{
    AgentActivity, AskedRow, Decided, DecisionInput, DecisionOutcome, DecisionRow,
    EarlierAgentRequest, GrantLimits, HostedCallUpdate, HostedSession, ItemRouting,
    NewAgentRequest, NewApproval, NewCall, NewMemberRow, NewRoute, PastCall, PinCheck,
    WriteCounters,
};

use airlock_core::policy::{PolicyInputs, ServerPolicy};
use airlock_core::{
    AgentFallback, ApprovalStatus, ArgRule, CallState, ItemKind, Mode, ServerDefault,
    SessionStatus, ToolSetting,
};
use airlock_protocol::{AcpAgentView, AddedRule, AgentView, DeviceView, MemberView, RouteView};
use serde_json::Value;
use std::collections::HashMap;

/// A time `ago` before now, as the RFC 3339 text every table stores (to compare with it).
pub fn time_before(ago: std::time::Duration) -> String {
    let then = time::OffsetDateTime::now_utc() - ago;
    then.format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| then.unix_timestamp().to_string())
}

/// Now, as the RFC 3339 text every table stores.
pub fn now() -> String {
    time_before(std::time::Duration::ZERO)
}

/// What a session's name must be, as a person is told.
pub const SESSION_NAME_RULE: &str = "a session name needs 1 to 200 printable characters";

/// Whether `name` may name a session ([`SESSION_NAME_RULE`]).
pub fn valid_session_name(name: &str) -> bool {
    !name.trim().is_empty() && name.len() <= 200 && !name.chars().any(char::is_control)
}

/// Sessions (chats): name, mode override, status.
pub trait Sessions {
    /// The session with this name, created if it does not exist yet.
    fn ensure_session(&self, name: &str) -> Result<SessionRow>;
    /// Starts a turn in one transaction: the session (created if new), the user message, and
    /// the status that tells a restarted engine to resume it.
    fn start_turn(&self, name: &str, text: &str) -> Result<(SessionRow, i64)>;
    fn session_by_name(&self, name: &str) -> Result<Option<SessionRow>>;
    fn session(&self, id: &str) -> Result<Option<SessionRow>>;
    fn sessions(&self) -> Result<Vec<SessionRow>>;
    /// The name a person reads for a session whose name is a key (an agent's session id).
    fn set_session_title(&self, id: &str, title: &str) -> Result<()>;
    fn set_session_mode(&self, id: &str, mode: Option<Mode>) -> Result<()>;
    fn set_session_status(
        &self,
        id: &str,
        status: SessionStatus,
        error: Option<&str>,
    ) -> Result<()> {
        self.set_session_status_fenced(id, status, error, None)
    }
    /// [`Sessions::set_session_status`] by the holder of `fence` ([`Fence`]).
    fn set_session_status_fenced(
        &self,
        id: &str,
        status: SessionStatus,
        error: Option<&str>,
        fence: Option<&Fence>,
    ) -> Result<()>;
}

/// Messages and the tool calls inside assistant messages, with the call state machine.
pub trait Calls {
    fn append_user_message(&self, session_id: &str, content: &str) -> Result<i64>;
    /// The step, its calls and their approval requests in one transaction; a counted grant's
    /// use is taken in it (`GrantUsedUp` when another step took the last one first).
    fn record_assistant_step(
        &self,
        session_id: &str,
        content: &str,
        calls: &[NewCall],
        approvals: &[NewApproval],
    ) -> Result<i64> {
        self.record_assistant_step_fenced(session_id, content, calls, approvals, None)
    }
    /// [`Calls::record_assistant_step`] by the holder of `fence` ([`Fence`]).
    fn record_assistant_step_fenced(
        &self,
        session_id: &str,
        content: &str,
        calls: &[NewCall],
        approvals: &[NewApproval],
        fence: Option<&Fence>,
    ) -> Result<i64>;
    fn messages(&self, session_id: &str) -> Result<Vec<MessageRow>>;
    fn calls_of_message(&self, message_id: i64) -> Result<Vec<CallRow>>;
    fn call(&self, call_id: &str) -> Result<Option<CallRow>>;
    fn running_calls(&self) -> Result<Vec<CallRow>>;
    fn mark_running(&self, calls: &[(String, Value)]) -> Result<()> {
        self.mark_running_fenced(calls, None)
    }
    /// [`Calls::mark_running`] (which claims them too) by the holder of `fence` ([`Fence`]).
    fn mark_running_fenced(&self, calls: &[(String, Value)], fence: Option<&Fence>) -> Result<()>;
    /// Claims calls for invocation (`invoked_at`): the ids claimed now, never twice.
    fn claim_invocation(&self, call_ids: &[&str]) -> Result<Vec<String>> {
        self.claim_invocation_fenced(call_ids, None)
    }
    /// [`Calls::claim_invocation`] by the holder of `fence` ([`Fence`]).
    fn claim_invocation_fenced(
        &self,
        call_ids: &[&str],
        fence: Option<&Fence>,
    ) -> Result<Vec<String>>;
    fn finish_call(&self, call_id: &str, state: CallState, result: &Value) -> Result<()> {
        self.finish_call_fenced(call_id, state, result, None)
    }
    /// [`Calls::finish_call`] by the holder of `fence` ([`Fence`]).
    fn finish_call_fenced(
        &self,
        call_id: &str,
        state: CallState,
        result: &Value,
        fence: Option<&Fence>,
    ) -> Result<()>;
}

/// Approval requests and the decisions on them.
pub trait Approvals {
    fn pending_approvals(&self) -> Result<Vec<ApprovalRow>>;
    fn approval(&self, approval_id: &str) -> Result<Option<ApprovalRow>>;
    fn approvals_of_message(&self, message_id: i64) -> Result<Vec<ApprovalRow>>;
    fn approvals_by_ids(&self, ids: &[&str]) -> Result<HashMap<String, ApprovalRow>>;
    /// An approval whose commit the disk refused no longer lets its call run.
    fn unconfirm_decision(&self, approval_id: &str) -> Result<bool>;
    fn pending_of_session(&self, session_id: &str) -> Result<Vec<String>>;
    fn decide(&self, input: &DecisionInput) -> Result<DecisionOutcome>;
    /// Each decision's own refusal is its own result; a failure of the database fails all.
    fn decide_many(&self, inputs: &[DecisionInput]) -> Result<Vec<Result<DecisionOutcome>>>;
    /// The batch in one durable transaction; a fully decided step's approved calls are
    /// started in it. `started` is told them right after the commit. SQLite's store claims
    /// them too (`invoked_at`), before any other thread can read what the commit wrote: the
    /// engine invokes each as started by its decision. A store with [`Replicas`] leaves them
    /// unclaimed: the replica that drives the turn (perhaps not the deciding one) claims each
    /// with [`Calls::claim_invocation`], once.
    fn decide_and_start(
        &self,
        inputs: &[DecisionInput],
        started: &dyn Fn(&[String]),
    ) -> Result<Decided>;
}

/// Requests that belong to no tool call (elicitations) and reading a decision back.
pub trait Requests {
    fn decision(&self, approval_id: &str) -> Result<Option<DecisionRow>>;
    fn decided_by(&self, approval_id: &str) -> Result<Option<String>>;
    fn pending_of_kind(&self, kind: ItemKind) -> Result<Vec<String>>;
    fn insert_request(&self, approval: &NewApproval) -> Result<()>;
    fn approval_status(&self, approval_id: &str) -> Result<Option<ApprovalStatus>>;
}

/// Other agents' tool calls (the gateway): the request beside its inbox item, found again by
/// its key; the agents' fallbacks and last requests.
pub trait AgentRequests {
    fn insert_agent_request(&self, approval: &NewApproval, origin: &NewAgentRequest) -> Result<()>;
    fn agent_requests_by_key(&self, request_key: &str) -> Result<Vec<EarlierAgentRequest>>;
    fn recent_agent_request(
        &self,
        agent: &str,
        agent_session: &str,
        tool: &str,
        args_hash: &str,
    ) -> Result<Option<EarlierAgentRequest>>;
    /// The newest request of this agent session for this tool, whatever its arguments (Qwen
    /// Code's PreToolUse after its PermissionRequest approved with an edit).
    fn latest_agent_request(
        &self,
        agent: &str,
        agent_session: &str,
        tool: &str,
    ) -> Result<Option<EarlierAgentRequest>>;
    /// Claims an approved deferred call for its client to run, once, durably and audited:
    /// [`StoreError::AlreadyClaimed`] when it was claimed before (at most once),
    /// [`StoreError::Refused`] when it is not an approved deferred call. Returns when it was
    /// claimed.
    fn claim_agent_call(&self, approval_id: &str) -> Result<String>;
    /// When a deferred call was claimed to run, if it was.
    fn agent_call_claimed_at(&self, approval_id: &str) -> Result<Option<String>>;
    fn record_agent_call(
        &self,
        activity: &AgentActivity<'_>,
        session_id: &str,
        detail: &Value,
        grant_use: Option<&str>,
    ) -> Result<()>;
    fn note_agent_outcome(&self, agent: &str, outcome: &str) -> Result<()>;
    fn agents(&self) -> Result<Vec<AgentView>>;
    fn set_agent_fallback(&self, agent: &str, fallback: AgentFallback) -> Result<()>;
}

/// Key/value settings (their keys, kinds and defaults: `airlock_core::Setting`).
pub trait Settings {
    fn setting(&self, key: &str) -> Result<Option<Value>>;
    /// Sets and audits it in one transaction.
    fn set_setting(&self, key: &str, value: &Value) -> Result<()>;
    /// The workspace's mode: the setting, else Ask.
    fn workspace_mode(&self) -> Result<Mode> {
        match self.setting(airlock_core::Setting::WorkspaceMode.key())? {
            Some(Value::String(text)) => {
                text.parse().map_err(|e: <Mode as std::str::FromStr>::Err| {
                    StoreError::CorruptJson {
                        what: "workspace mode",
                        message: e.to_string(),
                    }
                })
            }
            _ => Ok(Mode::Ask),
        }
    }
}

/// Per-tool settings, and what a notification may approve.
pub trait ToolSettings {
    fn seed_tool_setting(&self, server: &str, tool: &str, setting: ToolSetting) -> Result<()>;
    fn seed_agent_tool_settings(
        &self,
        server: &str,
        tools: &[&str],
        setting: ToolSetting,
    ) -> Result<Vec<String>>;
    fn set_tool_setting(&self, server: &str, tool: &str, setting: ToolSetting) -> Result<()>;
    fn tool_settings(&self) -> Result<Vec<(String, String, ToolSetting)>>;
    fn set_from_notification(
        &self,
        server: &str,
        tool: Option<&str>,
        allow: Option<bool>,
    ) -> Result<()>;
    /// What a notification may approve (the setting is "approve from a notification", not a
    /// conversion).
    #[allow(clippy::wrong_self_convention)]
    fn from_notification(&self) -> Result<Vec<(String, Option<String>, bool)>>;
}

/// MCP servers: their default, trust, configuration.
pub trait Servers {
    fn ensure_server(&self, name: &str, default: ServerDefault, config: &Value) -> Result<()>;
    fn set_server_default(&self, name: &str, default: ServerDefault) -> Result<()>;
    fn servers(&self) -> Result<Vec<ServerRow>>;
    fn upsert_server(&self, name: &str, config: &Value, definition_hash: &str) -> Result<()>;
    fn remove_server(&self, name: &str) -> Result<()>;
    fn set_server_trust(&self, name: &str, trust_read_only_hints: bool) -> Result<()>;
    fn set_server_enabled(&self, name: &str, enabled: bool) -> Result<()>;
}

/// The rug-pull guard: pins of each MCP tool's definition.
pub trait Pins {
    fn check_pin(
        &self,
        server: &str,
        tool: &str,
        definition: &Value,
        hash: &str,
    ) -> Result<PinCheck>;
    fn accept_pin(&self, server: &str, tool: &str) -> Result<bool>;
    fn current_definition(&self, server: &str, tool: &str) -> Result<Option<Value>>;
    fn tool_changes(&self, server: &str) -> Result<Vec<(String, String, Value, Value)>>;
    fn suspended_tools(&self) -> Result<Vec<(String, String, String)>>;
}

/// Argument rules.
pub trait Rules {
    /// A rule identical to one already there adds nothing and is not audited.
    fn add_rule(&self, rule: &ArgRule) -> Result<AddedRule>;
    fn remove_rule(&self, id: &str) -> Result<bool>;
    fn rules(&self) -> Result<Vec<RuleRow>>;
}

/// What a person's answers keep: remembered decisions, timed and counted grants, and the
/// grants for one chat.
pub trait Grants {
    fn remembered(&self) -> Result<Vec<RememberedRow>>;
    fn revoke_remembered(&self, id: &str) -> Result<bool>;
    /// `(server, tool)` allowed for this chat.
    fn session_grants(&self, session_id: &str) -> Result<Vec<(String, String)>>;
}

/// Paired phones.
pub trait Devices {
    fn add_device(&self, id: &str, name: &str, token_hash: &str) -> Result<DeviceView>;
    fn device_by_token_hash(&self, token_hash: &str) -> Result<Option<DeviceView>>;
    fn devices(&self) -> Result<Vec<DeviceView>>;
    fn revoke_device(&self, id: &str) -> Result<bool>;
}

/// The audit trail.
pub trait Audit {
    fn audit(
        &self,
        actor: &str,
        action: &str,
        session_id: Option<&str>,
        approval_id: Option<&str>,
        detail: &Value,
    ) -> Result<()>;
    /// The newest `limit` rows, newest first.
    fn audit_rows(&self, limit: usize) -> Result<Vec<AuditRow>>;
}

/// The calls in History read back (rule previews, approval insights).
pub trait History {
    fn past_calls(&self, server: &str, tool: &str) -> Result<Vec<PastCall>>;
    fn asked_rows(&self) -> Result<Vec<AskedRow>>;
}

/// Agents hosted over the Agent Client Protocol: their commands, and which chat each hosts.
pub trait HostedAgents {
    /// Registers (or replaces the command of) an ACP agent.
    fn save_acp_agent(&self, name: &str, command: &[String]) -> Result<()>;
    fn remove_acp_agent(&self, name: &str) -> Result<bool>;
    fn acp_agents(&self) -> Result<Vec<AcpAgentView>>;
    fn acp_agent(&self, name: &str) -> Result<Option<AcpAgentView>>;
    fn host_session(&self, session_id: &str, agent: &str, folder: &str) -> Result<()>;
    fn hosted_session(&self, session_id: &str) -> Result<Option<HostedSession>>;
    /// The hosted chats not ended yet (after a restart: the ones to end).
    fn live_hosted_sessions(&self) -> Result<Vec<HostedSession>>;
    fn set_hosted_pid(&self, session_id: &str, pid: Option<u32>) -> Result<()>;
    fn end_hosted_session(&self, session_id: &str, why: &str) -> Result<()>;
    /// An assistant message in a chat (what a hosted agent said, or what Airlock says of it).
    fn append_assistant_message(&self, session_id: &str, content: &str) -> Result<i64>;
    /// A hosted agent's tool call as a card of the chat: in `message`, or in a new assistant
    /// message holding `content` (the text the agent said before the call). The message's id.
    fn add_hosted_call(
        &self,
        session_id: &str,
        message: Option<i64>,
        content: &str,
        call: &NewCall,
    ) -> Result<i64>;
    fn update_hosted_call(&self, call_id: &str, update: &HostedCallUpdate) -> Result<()>;
    /// What the hosted agent thought before the answer of `message_id`, kept beside it.
    fn set_message_thought(&self, message_id: i64, thought: &str) -> Result<()>;
}

/// Each agent's own token for the local API (its HTTP hook, an SDK client): only its hash, one
/// per agent; issuing and revoking are audited.
pub trait AgentTokens {
    /// Keeps `token_hash` as `agent`'s token, replacing the one it had.
    fn set_agent_token(&self, agent: &str, token_hash: &str) -> Result<()>;
    fn revoke_agent_token(&self, agent: &str) -> Result<bool>;
    /// `(agent, token hash)` of every agent that has one.
    fn agent_token_hashes(&self) -> Result<Vec<(String, String)>>;
    /// `(agent, when it was issued)` of every agent that has one (Settings → Agents).
    fn agent_tokens_issued(&self) -> Result<Vec<(String, String)>>;
}

/// A team server's people and routing: members (their token's hash, never the token), the
/// routes of a tool's calls to a person or group, each routed item's state, delegation and the
/// approvals counted towards a quorum. Every change is audited with the person who made it.
pub trait Team {
    fn add_member(&self, new: &NewMemberRow, first: bool, by: &str) -> Result<MemberView>;
    fn has_members(&self) -> Result<bool>;
    fn member_by_token_hash(&self, token_hash: &str) -> Result<Option<MemberView>>;
    fn member_by_name(&self, name: &str) -> Result<Option<MemberView>>;
    fn members(&self) -> Result<Vec<MemberView>>;
    fn remove_member(&self, name: &str, by: &str) -> Result<bool>;
    fn audit_member_command(&self, person: &str, command: &str) -> Result<()>;
    fn add_route(&self, new: &NewRoute, by: &str) -> Result<RouteView>;
    fn routes(&self) -> Result<Vec<RouteView>>;
    fn remove_route(&self, id: &str, by: &str) -> Result<bool>;
    /// Routes an item the first time it is seen; false when it already was.
    fn route_item(&self, routing: &ItemRouting) -> Result<bool>;
    fn routing_of(&self, ids: &[&str]) -> Result<HashMap<String, ItemRouting>>;
    /// The routed items that move on at a time (escalation, expiry).
    fn timed_routing(&self) -> Result<Vec<ItemRouting>>;
    fn escalate(
        &self,
        approval_id: &str,
        from_step: u32,
        next_at: Option<&str>,
    ) -> Result<Option<ItemRouting>>;
    fn delegate(
        &self,
        approval_id: &str,
        assignee: &str,
        note: Option<&str>,
        by: &str,
    ) -> Result<ItemRouting>;
    /// Counts one person's approval of these arguments; the number of distinct people so far.
    fn record_vote(
        &self,
        approval_id: &str,
        member_id: &str,
        person: &str,
        args_hash: &str,
        edited_args: Option<&Value>,
    ) -> Result<u32>;
}

/// The whole store as the engine holds it (`Box<dyn Store>`): every concept, and what it
/// reports of itself.
pub trait Store:
    Sessions
    + Calls
    + Approvals
    + Requests
    + AgentRequests
    + Settings
    + ToolSettings
    + Servers
    + Pins
    + Rules
    + Grants
    + Devices
    + Audit
    + History
    + Team
    + AgentTokens
    + HostedAgents
    + Send
    + Sync
{
    /// Everything the policy needs, read in one go.
    fn policy_inputs(&self) -> Result<PolicyInputs> {
        let servers = self
            .servers()?
            .into_iter()
            .map(|s| {
                (
                    s.name,
                    ServerPolicy {
                        default: s.default,
                        trust_read_only_hints: s.trust_read_only_hints,
                    },
                )
            })
            .collect();
        Ok(PolicyInputs {
            workspace_mode: Some(self.workspace_mode()?),
            servers,
            tool_settings: self.tool_settings()?,
            rules: self.rules()?.into_iter().map(|r| r.rule).collect(),
            remembered: self.remembered()?.into_iter().map(|r| r.entry).collect(),
            suspended: self.suspended_tools()?,
            from_notification: self.from_notification()?,
        })
    }

    /// Why the store stopped writing (the disk refused a write), if it did: nothing more is
    /// decided until it is opened again.
    fn failure(&self) -> Option<String> {
        None
    }

    /// What the store's commits wrote since it was opened (where the backend counts them).
    fn write_counters(&self) -> WriteCounters {
        WriteCounters::default()
    }

    /// The other engines on the same database, when there can be any (a team's PostgreSQL);
    /// `None` for a store only this engine opens (SQLite's one file).
    fn replicas(&self) -> Option<&dyn Replicas> {
        None
    }
}

/// Work a replica holds, that no other replica touches while its holder's lease runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Work {
    /// A turn it drives (the key: the session's id).
    Turn,
    /// An agent's item a hook waits on through it (the key: the approval id).
    AgentItem,
    /// A form request (elicitation) whose server waits through it (the key: the approval id).
    Elicitation,
    /// A chat whose agent it hosts over ACP (the key: the session's id).
    HostedChat,
}

impl Work {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Turn => "turn",
            Self::AgentItem => "agent_item",
            Self::Elicitation => "elicitation",
            Self::HostedChat => "hosted_chat",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        [
            Self::Turn,
            Self::AgentItem,
            Self::Elicitation,
            Self::HostedChat,
        ]
        .into_iter()
        .find(|work| work.as_str() == text)
    }
}

/// Work held under a replica's lease, as [`Replicas::hold`] returned it: the fencing token of
/// that hold. Every write its holder makes for the work (claiming a call to run it, finishing
/// it, recording a step, ending the turn) passes it, and the store checks in that write's own
/// transaction that the hold is still there, locking it until the commit: once another replica
/// took the work over, the write is refused ([`StoreError::LeaseLost`]) and nothing of it is
/// written. A replica paused past its lease therefore neither runs what was taken over nor
/// overwrites what its new holder wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    pub work: Work,
    pub key: String,
    /// Unique to this hold: a later hold of the same work has another.
    pub token: i64,
}

/// What another replica (or the database) tells this one.
#[derive(Debug, Clone, PartialEq)]
pub enum Signal {
    /// These requests were decided (by the transaction that decided them): their waiters look
    /// again.
    Decided(Vec<String>),
    /// An event another replica emitted, as its JSON.
    Event(String),
    /// Signals may have been missed (the listening connection was lost and made again): look
    /// again at everything waited on.
    Resync,
}

/// Several engines (replicas) on one database: each has a lease it renews, holds the work it
/// owns under it, and hears what the others did. Only work whose holder's lease ran out is
/// ever taken over, and then by one replica only.
pub trait Replicas: Send + Sync {
    /// This replica's id (made when the store was opened).
    fn replica_id(&self) -> &str;
    /// Renews this replica's lease until `ttl` from now (the database's clock). False when it
    /// had run out and another replica may have taken its work: it holds nothing any more.
    fn renew_lease(&self, ttl: std::time::Duration) -> Result<bool>;
    /// Marks `key` as this replica's work: the fence its writes for it pass (the same while
    /// this hold lasts).
    fn hold(&self, work: Work, key: &str) -> Result<Fence>;
    /// This replica no longer holds `key`.
    fn release(&self, work: Work, key: &str) -> Result<()>;
    /// Takes the work of the replicas whose lease ran out: their leases and holds are deleted
    /// in the transaction that returns them, so each piece is taken by one replica, once.
    fn take_expired(&self) -> Result<Vec<(Work, String)>>;
    /// Whether this replica still has the hold `fence` names (it was not taken over).
    fn holds(&self, fence: &Fence) -> Result<bool>;
    /// Whether a replica whose lease runs holds `key` (this one included).
    fn held_by_live(&self, work: Work, key: &str) -> Result<bool>;
    /// The policy's generation: bumped in the transaction of every change the policy or a
    /// turn's settings read.
    fn policy_generation(&self) -> Result<i64>;
    /// Tells the other replicas of an event (in the background, in order; best effort: an
    /// event is a hint to look again, the store is the truth).
    fn publish(&self, event_json: &str);
    /// Starts delivering what the others tell this replica to `deliver` (on the store's own
    /// runtime), listening again after a lost connection (then [`Signal::Resync`]).
    fn listen(&self, deliver: Box<dyn Fn(Signal) + Send + Sync>) -> Result<()>;
}
