//! The engine: one per data directory. It owns the store, the tools, the model provider and the
//! running turns, and is the one path every decision goes through, whatever the channel.

mod agent_tokens;
pub mod agents;
mod caches;
mod clock;
pub mod commands;
mod data_dir;
mod decision;
mod driver;
pub mod elicitation;
pub mod error;
pub mod frontend;
pub mod hosted;
mod insights;
mod links;
mod on_disk;
pub mod pause;
mod provider;
pub mod remote;
mod replicas;
pub mod router;
mod routing;
mod secrets;
pub mod servers;
mod sessions;
mod settings;
mod shell;
mod team;
pub mod tools;
mod views;

pub use airlock_protocol::{
    AddedRule, ApprovalRow, AuditRow, CallRow, DecidedItem, Decision, DecisionKind,
    DecisionRequest, ElicitationAction, ElicitationAnswer, EngineEvent, ErrorCode, InboxItem,
    MessageRow, RememberedRow, RuleRow, ServerRow, ServerStatus, ServerView, SessionRow,
    ToolChange, ToolView, TurnOutcome,
};
pub use airlock_protocol::{HostedMcpServer, ProviderKind, ProviderKindInfo, ProviderSettings};
pub use airlock_store::PinCheck;
pub use elicitation::ElicitationRequest;
pub use error::EngineError;
pub use frontend::Frontend;
pub use hosted::{AgentHost, AgentToolReport, HostedTranscript, HostedTurn};
pub use provider::{provider_kind_names, provider_kinds};

pub use servers::{LOG_TAIL_MAX_BYTES, ServerHost};

use airlock_core::policy::PolicyConfig;
use airlock_core::{BUILTIN_SERVER, CallState, DecidedBy, ItemKind, ServerDefault};
use airlock_llm::ModelProvider;
use airlock_store::Store;
use decision::{Resolution, Settlement};
use router::ApprovalRouter;
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::{broadcast, watch};
use tools::ToolRegistry;
use tools::builtin::BuiltinTools;

pub type Result<T> = std::result::Result<T, EngineError>;

/// The desktop's store: the data directory's one SQLite file, behind the store port.
pub(crate) fn open_store(data_dir: &Path) -> Result<Box<dyn Store>> {
    let store = airlock_store_sqlite::Store::open(&data_dir.join("airlock.db"))
        .map_err(airlock_store::StoreError::from)?;
    Ok(Box::new(store))
}

/// Opens a shared store through an adapter the engine does not link (`Database::shared`).
pub type OpenSharedStore =
    Box<dyn FnOnce() -> std::result::Result<Box<dyn Store>, airlock_store::StoreError> + Send>;

/// Where an engine keeps its state.
#[derive(Default)]
pub enum Database {
    /// The data directory's one SQLite file: this engine alone (the desktop's default).
    #[default]
    DataDir,
    /// A database several engines (replicas) may share (PostgreSQL, `serve --database-url`),
    /// opened when the engine opens. The engine links only the SQLite adapter, so the desktop
    /// never carries a database client: whoever serves a shared database brings its adapter
    /// (the CLI's `postgres` feature).
    Shared(OpenSharedStore),
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::DataDir => "DataDir",
            Self::Shared(_) => "Shared",
        })
    }
}

impl Database {
    /// A shared database, opened by `open` (e.g. `PostgresStore::connect`) when the engine opens.
    pub fn shared<S: Store + 'static>(
        open: impl FnOnce() -> std::result::Result<S, airlock_store::StoreError> + Send + 'static,
    ) -> Self {
        Self::Shared(Box::new(move || Ok(Box::new(open()?) as Box<dyn Store>)))
    }

    /// Whether several engines may share this database.
    pub fn is_shared(&self) -> bool {
        matches!(self, Self::Shared(_))
    }

    fn open(self, data_dir: &Path) -> Result<Box<dyn Store>> {
        match self {
            Self::DataDir => open_store(data_dir),
            Self::Shared(open) => Ok(open()?),
        }
    }
}

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
    pub store: Box<dyn Store>,
    pub tools: ToolRegistry,
    /// The built-in tools, told which environment variables are secrets.
    pub builtin: BuiltinTools,
    pub router: ApprovalRouter,
    pub events: broadcast::Sender<EngineEvent>,
    pub turns: Mutex<HashMap<String, Turn>>,
    /// Built providers by name ("" for the default), rebuilt when their settings change.
    pub providers: RwLock<HashMap<String, Arc<dyn ModelProvider>>>,
    /// The policy generation the providers were built at (`caches`).
    pub providers_generation: Mutex<Option<i64>>,
    /// The compiled policy and the policy generation it was compiled at (`None` on a store
    /// only this engine writes).
    pub policy: RwLock<Option<(Option<i64>, Arc<PolicyConfig>)>>,
    pub settings: RwLock<Option<(Option<i64>, Arc<TurnSettings>)>>,
    pub data_dir: PathBuf,
    pub workspace: PathBuf,
    pub server_host: RwLock<Option<Arc<dyn servers::ServerHost>>>,
    /// Runs the agents that host chats over ACP (`crates/acp`).
    pub agent_host: RwLock<Option<Arc<dyn hosted::AgentHost>>>,
    /// "Pause all agents" (see `pause`).
    pub paused: watch::Sender<bool>,
    pub frontend: RwLock<Option<Arc<dyn Frontend>>>,
    /// Who waits on which agent item (the agent gateway).
    pub agent_waiters: agents::AgentWaiters,
    /// The agents' own tokens' hashes (cached from the store).
    pub agent_tokens: agent_tokens::AgentTokens,
    /// One-time codes for pairing a phone (kept in memory: a restart forgets them).
    pub pairing: remote::PairingCodes,
    /// Calls a decision started and claimed in its own transaction, not yet invoked: the
    /// turn invokes each once (taking it out). Any other `running` call must be claimed first.
    pub started_by_decision: Mutex<HashSet<String>>,
    /// A team server's members and routes, as the decision path needs them (`team`).
    pub team: routing::TeamState,
    /// This replica's lease as the work it holds sees it (`replicas`).
    pub lease: replicas::Lease,
    /// Where tests hold steps between deciding and recording, to force them to race.
    #[cfg(test)]
    pub step_gate: driver::StepGate,
}

impl Inner {
    /// Whether `call_id` was started by a decision and not invoked yet; it no longer is after.
    pub(crate) fn take_started(&self, call_id: &str) -> bool {
        self.started_by_decision
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(call_id)
    }
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
        Self::open_on(config, Database::DataDir)
    }

    /// [`Engine::open`] on this database: on a shared one (PostgreSQL), one replica among
    /// several, which recovers only the work of replicas whose lease ran out (`replicas`).
    pub fn open_on(config: EngineConfig, database: Database) -> Result<Self> {
        let data_dir = config.data_dir;
        let create = |dir: &PathBuf| {
            std::fs::create_dir_all(dir).map_err(|e| EngineError::DataDir {
                path: dir.clone(),
                message: e.to_string(),
            })
        };
        create(&data_dir)?;
        data_dir::close(&data_dir)?;
        let store = database.open(&data_dir)?;
        // A folder given at start wins; else the one chosen in Settings; else the default.
        let chosen = store
            .setting(airlock_core::Setting::Workspace.key())?
            .and_then(|v| v.as_str().map(PathBuf::from));
        let workspace = config
            .workspace
            .or(chosen)
            .unwrap_or_else(|| data_dir::default_workspace(&data_dir));
        create(&workspace)?;
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
        for settings in provider::load(store.as_ref())?
            .into_iter()
            .chain(provider::load_named(store.as_ref())?.into_values())
        {
            if let Some(name) = &settings.api_key_env {
                builtin.hide_env(name);
            }
        }
        let (events, _) = broadcast::channel(4096);
        let paused = pause::load(store.as_ref())?;
        let engine = Self {
            inner: Arc::new(Inner {
                store,
                tools,
                builtin,
                router: ApprovalRouter::default(),
                events,
                turns: Mutex::new(HashMap::new()),
                providers: RwLock::new(HashMap::new()),
                providers_generation: Mutex::new(None),
                policy: RwLock::new(None),
                settings: RwLock::new(None),
                data_dir,
                workspace,
                server_host: RwLock::new(None),
                agent_host: RwLock::new(None),
                paused,
                frontend: RwLock::new(None),
                agent_waiters: agents::AgentWaiters::default(),
                agent_tokens: agent_tokens::AgentTokens::default(),
                pairing: remote::PairingCodes::default(),
                started_by_decision: Mutex::new(HashSet::new()),
                team: routing::TeamState::default(),
                lease: replicas::Lease::default(),
                #[cfg(test)]
                step_gate: driver::StepGate::default(),
            }),
        };
        engine.recover()?;
        team::start_escalations(&engine.inner);
        Ok(engine)
    }

    pub fn data_dir(&self) -> &Path {
        &self.inner.data_dir
    }

    pub fn workspace(&self) -> &Path {
        &self.inner.workspace
    }

    /// What the store wrote since the engine opened it (commits, pages, checkpoints).
    pub fn write_counters(&self) -> airlock_store::WriteCounters {
        self.inner.store.write_counters()
    }

    #[cfg(test)]
    pub(crate) fn store(&self) -> &dyn Store {
        self.inner.store.as_ref()
    }

    pub fn tools(&self) -> &ToolRegistry {
        &self.inner.tools
    }

    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.inner.events.subscribe()
    }

    fn recover(&self) -> Result<()> {
        // Approvals the disk refused at the time never run, even if they reached the disk.
        for approval_id in data_dir::take_unconfirmed(&self.inner.data_dir) {
            self.inner.store.unconfirm_decision(&approval_id)?;
        }
        if self.inner.store.replicas().is_some() {
            // One replica among several: the rest of what a crash leaves is another live
            // replica's work, except where that replica's lease ran out.
            self.inner.write_fallbacks()?;
            return replicas::join(&self.inner);
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
        // The agents' hooks come back to their items (the same request key), or they go.
        self.inner.withdraw_abandoned_later()?;
        // The hooks read their fallback from agents.json: as the store has it now (a migration
        // may have changed it), not as a previous version wrote it.
        self.inner.write_fallbacks()?;
        for call in self.inner.store.running_calls()? {
            let result = json!({
                "type": "error",
                "message": "interrupted: Airlock stopped while this call was running; it was not run again",
            });
            self.inner
                .store
                .finish_call(&call.id, CallState::Failed, &result)?;
        }
        // A hosted chat's agent ended with the previous process: never driven as a model loop.
        hosted::end_after_restart(&self.inner)?;
        for session in self.inner.store.sessions()? {
            if driver::needs_driving(&session) {
                driver::start(&self.inner, &session);
            }
        }
        Ok(())
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

    /// Decisions from a paired device (the phone inbox): the same path, audited with the
    /// device's name. A device decides one call at a time: no grants, nothing remembered, no
    /// "allow for this chat" — those are refused before anything is decided.
    pub fn decide_many_from_device(
        &self,
        requests: Vec<DecisionRequest>,
        device: &str,
    ) -> Result<Vec<Result<ApprovalRow>>> {
        if let Some(standing) = requests.iter().find(|r| r.decision.keeps_anything()) {
            return Err(EngineError::NotAllowed(format!(
                "{}: a paired device decides one call; grants and remembered decisions are made on the desktop",
                standing.approval_id
            )));
        }
        let settlements = requests
            .into_iter()
            .map(|request| {
                let mut settlement: decision::Settlement = request.into();
                settlement.device = Some(device.to_string());
                settlement
            })
            .collect();
        self.inner.settle(settlements, DecidedBy::Remote)
    }

    /// Whether a notification may offer to approve this item (see the decision path's rule:
    /// a tool declared read-only, its arguments shown whole). Deny is always offered.
    pub fn notification_may_approve(&self, item: &InboxItem) -> bool {
        self.inner
            .low_risk_for_notification(item.kind, &item.server, &item.tool, &item.args)
    }
}

impl Inner {
    pub(crate) fn emit(&self, event: EngineEvent) {
        self.publish(&event);
        let _ = self.events.send(event);
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
        // A tool only an agent runs (a proxied server's, an app's): its definition as the
        // agent last gave it, so the inbox can show its schema and check an edit against it.
        let given = match (&tool, row.kind) {
            (None, ItemKind::AgentToolCall) => self
                .store
                .current_definition(&row.server, &row.tool)
                .ok()
                .flatten(),
            _ => None,
        };
        let given_field = |key: &str| {
            given
                .as_ref()
                .and_then(|d| d.get(key))
                .filter(|v| !v.is_null())
                .cloned()
        };
        let available_decisions =
            decision::available_decisions(row.kind, decision::agent_editable(&row));
        let editable = available_decisions.contains(&DecisionKind::Edit);
        let agent = row.agent;
        InboxItem {
            editable,
            available_decisions,
            agent: agent.as_ref().map(|a| a.agent.clone()),
            client: agent.as_ref().and_then(|a| a.client.clone()),
            agent_session: agent.as_ref().map(|a| a.agent_session.clone()),
            cwd: agent.and_then(|a| a.cwd),
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
            description: tool
                .as_ref()
                .map(|t| t.def.description.clone())
                .or_else(|| {
                    given_field("description").and_then(|d| d.as_str().map(str::to_string))
                }),
            input_schema: tool
                .map(|t| t.def.input_schema.clone())
                .or_else(|| given_field("input_schema")),
            message,
            schema,
        }
    }
}

#[cfg(test)]
mod tests;
