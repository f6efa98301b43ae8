//! The engine: one per data directory. It owns the store, the tools, the model provider and the
//! running turns, and is the one path every decision goes through, whatever the channel.

mod data_dir;
mod decision;
mod driver;
pub mod elicitation;
pub mod error;
pub mod frontend;
pub mod pause;
mod provider;
pub mod router;
pub mod servers;
pub mod tools;

pub use airlock_protocol::{
    ApprovalRow, AuditRow, CallRow, DecidedItem, DecisionRequest, ElicitationAction,
    ElicitationAnswer, EngineEvent, ErrorCode, InboxItem, MessageRow, RememberedRow, RuleRow,
    ServerRow, ServerStatus, ServerView, SessionRow, ToolChange, ToolView, TurnOutcome,
};
pub use airlock_store::PinCheck;
pub use elicitation::ElicitationRequest;
pub use error::EngineError;
pub use frontend::Frontend;
pub use provider::{ProviderKind, ProviderKindInfo, ProviderSettings};
pub use servers::{LOG_TAIL_MAX_BYTES, ServerHost};

use airlock_core::Setting;
use airlock_core::policy::PolicyConfig;
use airlock_core::{
    ArgRule, BUILTIN_SERVER, CallState, DecidedBy, ItemKind, Mode, ServerDefault, ToolSetting,
};
use airlock_llm::ModelProvider;
use airlock_store::Store;
use decision::{Resolution, Settlement};
use router::ApprovalRouter;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::{broadcast, watch};
use tools::ToolRegistry;
use tools::builtin::BuiltinTools;

pub type Result<T> = std::result::Result<T, EngineError>;

/// Where the engine keeps its things.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub data_dir: PathBuf,
    /// The built-in tools' folder; default: `Airlock` in the person's documents folder (never
    /// inside the data directory, whose token and database must stay out of a command's reach).
    pub workspace: Option<PathBuf>,
}

/// Settings a turn reads at every step, cached until one changes.
#[derive(Debug, Clone)]
pub(crate) struct TurnSettings {
    pub step_limit: usize,
    pub approval_timeout_secs: Option<u64>,
    pub system_prompt: Option<String>,
}

/// What a running turn's watchers see.
#[derive(Debug, Clone, Default)]
pub(crate) struct TurnWatch {
    pub running: bool,
    pub outcome: Option<TurnOutcome>,
}

pub(crate) struct Turn {
    pub cancel: watch::Sender<bool>,
    pub state: watch::Sender<TurnWatch>,
}

pub(crate) struct Inner {
    pub store: Store,
    pub tools: ToolRegistry,
    /// The built-in tools, told which environment variables are secrets.
    pub builtin: BuiltinTools,
    pub router: ApprovalRouter,
    pub events: broadcast::Sender<EngineEvent>,
    pub turns: Mutex<HashMap<String, Turn>>,
    /// Built providers by name ("" for the default), rebuilt when their settings change.
    pub providers: RwLock<HashMap<String, Arc<dyn ModelProvider>>>,
    pub policy: RwLock<Option<Arc<PolicyConfig>>>,
    pub settings: RwLock<Option<Arc<TurnSettings>>>,
    pub data_dir: PathBuf,
    pub workspace: PathBuf,
    pub server_host: RwLock<Option<Arc<dyn servers::ServerHost>>>,
    /// "Pause all agents" (see `pause`).
    pub paused: watch::Sender<bool>,
    pub frontend: RwLock<Option<Arc<dyn Frontend>>>,
}

/// Cheap to clone; every clone is the same engine.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("data_dir", &self.inner.data_dir)
            .finish()
    }
}

impl Engine {
    /// Opens the data directory, recovers from a crash (calls found `running` are reported as
    /// interrupted, never re-run) and resumes every unfinished turn. Needs a tokio runtime.
    pub fn open(config: EngineConfig) -> Result<Self> {
        let data_dir = config.data_dir;
        let workspace = config
            .workspace
            .unwrap_or_else(|| data_dir::default_workspace(&data_dir));
        for dir in [&data_dir, &workspace] {
            std::fs::create_dir_all(dir).map_err(|e| EngineError::DataDir {
                path: dir.clone(),
                message: e.to_string(),
            })?;
        }
        data_dir::make_private(&data_dir, &workspace)?;
        let store = Store::open(&data_dir.join("airlock.db"))?;
        data_dir::make_private(&data_dir, &workspace)?;
        store.ensure_server(
            BUILTIN_SERVER,
            ServerDefault::Required,
            &json!({"kind": "builtin"}),
        )?;
        for (tool, setting) in BuiltinTools::default_settings() {
            store.seed_tool_setting(BUILTIN_SERVER, tool, setting)?;
        }
        let tools = ToolRegistry::default();
        let builtin = BuiltinTools::new(workspace.clone());
        tools.register(BUILTIN_SERVER, Arc::new(builtin.clone()));
        for settings in provider::load(&store)?
            .into_iter()
            .chain(provider::load_named(&store)?.into_values())
        {
            if let Some(name) = &settings.api_key_env {
                builtin.hide_env(name);
            }
        }
        let (events, _) = broadcast::channel(4096);
        let paused = pause::load(&store)?;
        let engine = Self {
            inner: Arc::new(Inner {
                store,
                tools,
                builtin,
                router: ApprovalRouter::default(),
                events,
                turns: Mutex::new(HashMap::new()),
                providers: RwLock::new(HashMap::new()),
                policy: RwLock::new(None),
                settings: RwLock::new(None),
                data_dir,
                workspace,
                server_host: RwLock::new(None),
                paused,
                frontend: RwLock::new(None),
            }),
        };
        engine.recover()?;
        Ok(engine)
    }

    pub fn data_dir(&self) -> &Path {
        &self.inner.data_dir
    }

    pub fn workspace(&self) -> &Path {
        &self.inner.workspace
    }

    #[cfg(test)]
    pub(crate) fn store(&self) -> &Store {
        &self.inner.store
    }

    // ---- views of what is kept (the protocol's types, never the store itself) ----

    /// One approval request, whatever its status.
    pub fn approval(&self, approval_id: &str) -> Result<Option<ApprovalRow>> {
        Ok(self.inner.store.approval(approval_id)?)
    }

    /// The newest `limit` rows of the audit trail, oldest first.
    pub fn audit(&self, limit: usize) -> Result<Vec<AuditRow>> {
        Ok(self.inner.store.audit_rows(limit)?)
    }

    pub fn rules(&self) -> Result<Vec<RuleRow>> {
        Ok(self.inner.store.rules()?)
    }

    pub fn remembered(&self) -> Result<Vec<RememberedRow>> {
        Ok(self.inner.store.remembered()?)
    }

    /// Every server's settings as kept (see [`Engine::servers`] for their live state too).
    pub fn server_settings(&self) -> Result<Vec<ServerRow>> {
        Ok(self.inner.store.servers()?)
    }

    pub fn workspace_mode(&self) -> Result<Mode> {
        Ok(self.inner.store.workspace_mode()?)
    }

    /// One setting's stored value.
    pub fn setting(&self, setting: Setting) -> Result<Option<Value>> {
        Ok(self.inner.store.setting(setting.key())?)
    }

    /// A fresh id for an argument rule.
    pub fn new_rule_id() -> String {
        Store::new_rule_id()
    }

    /// Compares an MCP tool's definition with its pin (pinning it when first seen); a change
    /// suspends the tool's grants until the person reviews it.
    pub fn check_tool_pin(
        &self,
        server: &str,
        tool: &str,
        definition: &Value,
        hash: &str,
    ) -> Result<PinCheck> {
        Ok(self.inner.store.check_pin(server, tool, definition, hash)?)
    }

    pub fn tools(&self) -> &ToolRegistry {
        &self.inner.tools
    }

    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.inner.events.subscribe()
    }

    /// Why Airlock can no longer record decisions, when the disk refused a write.
    pub fn storage_failure(&self) -> Option<String> {
        self.inner.store.failure()
    }

    fn recover(&self) -> Result<()> {
        // Approvals the disk refused at the time never run, even if they reached the disk.
        for approval_id in data_dir::take_unconfirmed(&self.inner.data_dir) {
            self.inner.store.unconfirm_decision(&approval_id)?;
        }
        // The connections that asked are gone with the previous process.
        let asked = self.inner.store.pending_of_kind(ItemKind::Elicitation)?;
        self.inner.settle(
            asked
                .into_iter()
                .map(|id| Settlement::new(id, Resolution::Cancel).with_reason("engine restarted"))
                .collect(),
            DecidedBy::Engine,
        )?;
        for call in self.inner.store.calls_in_state(CallState::Running)? {
            let result = json!({
                "type": "error",
                "message": "interrupted: Airlock stopped while this call was running; it was not run again",
            });
            self.inner
                .store
                .finish_call(&call.id, CallState::Failed, &result)?;
        }
        for session in self.inner.store.sessions()? {
            if driver::needs_driving(&session) {
                driver::start(&self.inner, &session);
            }
        }
        Ok(())
    }

    /// Sends a user message and starts the turn; returns at once.
    pub fn send_message(&self, session: &str, text: &str) -> Result<SessionRow> {
        if text.trim().is_empty() {
            return Err(EngineError::Invalid("the message is empty".into()));
        }
        let existing = self.inner.store.session_by_name(session)?;
        self.inner
            .provider_for(existing.as_ref().map(|s| s.id.as_str()))?;
        if let Some(existing) = existing
            && let Some(status) = self.running_status(&existing.id)
        {
            return Err(EngineError::Busy {
                session: existing.name,
                status,
            });
        }
        let (session, _) = self.inner.store.start_turn(session, text)?;
        driver::start(&self.inner, &session);
        Ok(session)
    }

    fn running_status(&self, session_id: &str) -> Option<String> {
        let turns = self.inner.turns.lock().unwrap_or_else(|p| p.into_inner());
        let turn = turns.get(session_id)?;
        if !turn.state.borrow().running {
            return None;
        }
        let status = self
            .inner
            .store
            .session(session_id)
            .ok()
            .flatten()
            .map(|s| s.status.to_string())
            .unwrap_or_else(|| "running".into());
        Some(status)
    }

    /// Waits for the session's current turn to end (at once when none is running).
    pub async fn wait_turn(&self, session: &str) -> Result<TurnOutcome> {
        let row = self.session(session)?;
        let receiver = {
            let turns = self.inner.turns.lock().unwrap_or_else(|p| p.into_inner());
            turns.get(&row.id).map(|turn| turn.state.subscribe())
        };
        if let Some(mut receiver) = receiver {
            let state = receiver
                .wait_for(|state| !state.running)
                .await
                .map(|s| s.clone());
            if let Ok(TurnWatch {
                outcome: Some(outcome),
                ..
            }) = state
            {
                return Ok(outcome);
            }
        }
        let answer = self
            .inner
            .store
            .messages(&row.id)?
            .into_iter()
            .rev()
            .find(|m| m.role == "assistant" && m.calls.is_empty())
            .map(|m| m.content);
        Ok(TurnOutcome {
            session: row.name,
            status: airlock_core::TurnStatus::Idle,
            answer,
            error: row.last_error,
        })
    }

    /// Cancels the session's running turn: pending approvals are cancelled, nothing more runs.
    pub fn cancel(&self, session: &str) -> Result<bool> {
        let row = self.session(session)?;
        let turns = self.inner.turns.lock().unwrap_or_else(|p| p.into_inner());
        match turns.get(&row.id) {
            Some(turn) if turn.state.borrow().running => {
                let _ = turn.cancel.send(true);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    pub fn session(&self, name: &str) -> Result<SessionRow> {
        self.inner
            .store
            .session_by_name(name)?
            .ok_or_else(|| EngineError::UnknownSession(name.to_string()))
    }

    pub fn sessions(&self) -> Result<Vec<SessionRow>> {
        Ok(self.inner.store.sessions()?)
    }

    pub fn transcript(&self, session: &str) -> Result<Vec<MessageRow>> {
        let row = self.session(session)?;
        Ok(self.inner.store.messages(&row.id)?)
    }

    /// Every pending item, oldest first.
    pub fn inbox(&self) -> Result<Vec<InboxItem>> {
        Ok(self
            .inner
            .store
            .pending_approvals()?
            .into_iter()
            .map(|row| self.inner.inbox_item(row))
            .collect())
    }

    /// One decision: [`Engine::decide_many`] with a batch of one.
    pub fn decide(&self, request: DecisionRequest, by: DecidedBy) -> Result<ApprovalRow> {
        self.inner
            .settle(vec![request.into()], by)?
            .pop()
            .unwrap_or_else(|| Err(EngineError::Invalid("no decision was made".into())))
    }

    /// The one path for decisions from every channel: the whole batch in one durable
    /// transaction. Each decision is applied or refused on its own (a refusal changes nothing
    /// and leaves an audit row); an edit is checked against the tool's schema before anything
    /// is kept. The outer error means the transaction failed and nothing was decided.
    pub fn decide_many(
        &self,
        requests: Vec<DecisionRequest>,
        by: DecidedBy,
    ) -> Result<Vec<Result<ApprovalRow>>> {
        self.inner
            .settle(requests.into_iter().map(Into::into).collect(), by)
    }

    /// Whether a notification may offer to approve this item (see the decision path's rule:
    /// a tool declared read-only, its arguments shown whole). Deny is always offered.
    pub fn notification_may_approve(&self, item: &InboxItem) -> bool {
        self.inner
            .low_risk_for_notification(item.kind, &item.server, &item.tool, &item.args)
    }

    // ---- settings ----

    pub fn provider_settings(&self) -> Result<Option<ProviderSettings>> {
        provider::load(&self.inner.store)
    }

    /// The default provider first (when set), then the named ones by name.
    pub fn providers(&self) -> Result<Vec<ProviderSettings>> {
        let mut all: Vec<ProviderSettings> =
            provider::load(&self.inner.store)?.into_iter().collect();
        all.extend(provider::load_named(&self.inner.store)?.into_values());
        Ok(all)
    }

    /// Sets the default provider, or the named one `settings.name` names.
    pub fn set_provider(&self, settings: ProviderSettings) -> Result<()> {
        let built = provider::build(&settings)?;
        provider::save(&self.inner.store, &settings)?;
        if let Some(name) = &settings.api_key_env {
            self.inner.builtin.hide_env(name);
        }
        self.inner
            .providers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(provider::cache_key(settings.name.as_deref()), built);
        Ok(())
    }

    /// Makes a session (created if new) use the named provider from its next model request on.
    pub fn choose_provider(&self, session: &str, name: &str) -> Result<()> {
        let row = self.inner.store.ensure_session(session)?;
        if let Some(status) = self.running_status(&row.id) {
            return Err(EngineError::Busy {
                session: row.name,
                status,
            });
        }
        provider::choose(&self.inner.store, &row.id, name)
    }

    /// Sets the workspace default, or one session's mode (`None` clears the override).
    pub fn set_mode(&self, session: Option<&str>, mode: Option<Mode>) -> Result<()> {
        match session {
            Some(name) => {
                let row = self.inner.store.ensure_session(name)?;
                self.inner.store.set_session_mode(&row.id, mode)?;
            }
            None => {
                let mode = mode.unwrap_or(Mode::Ask);
                self.inner
                    .store
                    .set_setting(Setting::WorkspaceMode.key(), &json!(mode.as_str()))?;
                self.inner.invalidate_policy();
            }
        }
        Ok(())
    }

    /// Sets one setting, after checking that the value is of its kind.
    pub fn set_setting(&self, setting: Setting, value: &Value) -> Result<()> {
        setting.check(value).map_err(EngineError::Invalid)?;
        self.inner.store.set_setting(setting.key(), value)?;
        self.inner.invalidate_policy();
        Ok(())
    }

    pub fn tool_views(&self) -> Result<Vec<ToolView>> {
        let policy = self.inner.policy()?;
        let settings: HashMap<(String, String), ToolSetting> = self
            .inner
            .store
            .tool_settings()?
            .into_iter()
            .map(|(server, tool, setting)| ((server, tool), setting))
            .collect();
        Ok(self
            .inner
            .tools
            .all()
            .into_iter()
            .map(|tool| {
                let def = &tool.def;
                let key = (def.server.clone(), def.name.clone());
                ToolView {
                    server: def.server.clone(),
                    tool: def.name.clone(),
                    model_name: def.model_name(),
                    description: def.description.clone(),
                    setting: settings
                        .get(&key)
                        .copied()
                        .unwrap_or(ToolSetting::ServerDefault),
                    effective: policy.effective_setting(&def.server, &def.name, def.read_only_hint),
                    read_only_hint: def.read_only_hint,
                    annotations: def.annotations.clone(),
                }
            })
            .collect())
    }

    pub fn set_tool_setting(&self, server: &str, tool: &str, setting: ToolSetting) -> Result<()> {
        if self.inner.tools.tool(server, tool).is_none() {
            return Err(EngineError::UnknownTool {
                server: server.into(),
                tool: tool.into(),
            });
        }
        self.inner.store.set_tool_setting(server, tool, setting)?;
        self.inner.invalidate_policy();
        Ok(())
    }

    /// Adds an argument rule after checking that it compiles.
    pub fn add_rule(&self, rule: ArgRule) -> Result<ArgRule> {
        PolicyConfig::compile(airlock_core::policy::PolicyInputs {
            rules: vec![rule.clone()],
            ..Default::default()
        })?;
        self.inner.store.add_rule(&rule)?;
        self.inner.invalidate_policy();
        Ok(rule)
    }

    pub fn revoke_remembered(&self, id: &str) -> Result<bool> {
        let removed = self.inner.store.revoke_remembered(id)?;
        self.inner.invalidate_policy();
        Ok(removed)
    }
}

impl Inner {
    pub(crate) fn emit(&self, event: EngineEvent) {
        let _ = self.events.send(event);
    }

    /// The provider a session uses (its chosen named one, else the default); `None` for a
    /// session not created yet.
    pub(crate) fn provider_for(&self, session_id: Option<&str>) -> Result<Arc<dyn ModelProvider>> {
        let chosen = provider::chosen(&self.store, session_id)?;
        let key = provider::cache_key(chosen.as_deref());
        if let Some(provider) = self
            .providers
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(&key)
            .cloned()
        {
            return Ok(provider);
        }
        let built = provider::build(&provider::settings_of(&self.store, chosen)?)?;
        self.providers
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, built.clone());
        Ok(built)
    }

    pub(crate) fn policy(&self) -> Result<Arc<PolicyConfig>> {
        if let Some(policy) = self
            .policy
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return Ok(policy);
        }
        let compiled = Arc::new(PolicyConfig::compile(self.store.policy_inputs()?)?);
        *self.policy.write().unwrap_or_else(|p| p.into_inner()) = Some(compiled.clone());
        Ok(compiled)
    }

    /// Drops the cached policy and settings; the next call reads them from the store again.
    pub(crate) fn invalidate_policy(&self) {
        *self.policy.write().unwrap_or_else(|p| p.into_inner()) = None;
        *self.settings.write().unwrap_or_else(|p| p.into_inner()) = None;
    }

    pub(crate) fn turn_settings(&self) -> Result<Arc<TurnSettings>> {
        if let Some(settings) = self
            .settings
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
        {
            return Ok(settings);
        }
        let number =
            |key| -> Result<Option<u64>> { Ok(self.store.setting(key)?.and_then(|v| v.as_u64())) };
        let settings = Arc::new(TurnSettings {
            step_limit: number(Setting::StepLimit.key())?
                .map_or(driver::DEFAULT_STEP_LIMIT, |n| n as usize),
            approval_timeout_secs: number(Setting::ApprovalTimeoutSecs.key())?.filter(|s| *s > 0),
            system_prompt: match self.store.setting(Setting::SystemPrompt.key())? {
                Some(Value::String(prompt)) if !prompt.is_empty() => Some(prompt),
                _ => None,
            },
        });
        *self.settings.write().unwrap_or_else(|p| p.into_inner()) = Some(settings.clone());
        Ok(settings)
    }

    pub(crate) fn inbox_item(&self, row: ApprovalRow) -> InboxItem {
        let elicitation = row.kind == ItemKind::Elicitation;
        let tool = if elicitation {
            None
        } else {
            self.tools.tool(&row.server, &row.tool)
        };
        let message = elicitation.then(|| {
            row.args
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        });
        let schema = if elicitation {
            row.args.get("schema").cloned()
        } else {
            None
        };
        InboxItem {
            approval_id: row.approval_id,
            tool_call_id: row.tool_call_id,
            kind: row.kind,
            session: row.session,
            session_id: row.session_id,
            server: row.server,
            tool: row.tool,
            args: row.args,
            args_hash: row.args_hash,
            why: row.why,
            created_at: row.created_at,
            expires_at: row.expires_at,
            description: tool.as_ref().map(|t| t.def.description.clone()),
            input_schema: tool.map(|t| t.def.input_schema.clone()),
            message,
            schema,
        }
    }
}

#[cfg(test)]
mod tests;
