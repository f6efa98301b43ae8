//! The one dispatcher of the command table (`airlock_protocol::commands`): the window's invoke,
//! the local API's `/v1/commands/{name}` and the phone all run a command here, through the same
//! engine call. Who calls ([`Caller`]) decides only who a decision is recorded as and how an
//! error reads; which commands a caller may run is the table's. What lives outside the engine
//! (the tray, the login entry, the agents' config files, the phone inbox's listener) is asked of
//! a narrow [`Host`]; where there is none (`airlock serve` has no tray) it answers "not
//! available here".

use crate::{Engine, EngineError};
use airlock_core::{ArgRule, DecidedBy, Setting, parse_mcp_servers_each};
use airlock_protocol::commands::{AnyCommand, Command, Surface};
use airlock_protocol::{Access, MemberView};
use airlock_protocol::{
    AgentStatus, AppInfo, CommandError, CommandResult, ConnectReport, DecisionOutcome,
    DecisionRequest, EngineStatus, ErrorCode, ImportCandidate, ImportPreview, ImportReport,
    Navigate, Pairing, RefusedServer, RemoteView, SettingsView, ShellOption, TeamInboxView,
};
use serde_json::{Value, json};
use std::future::Future;

/// How many log lines "Show log" asks for unless told.
pub const DEFAULT_LOG_LINES: usize = 200;
/// How many audit rows a listing shows unless told.
pub const DEFAULT_AUDIT_ROWS: usize = 5000;

/// Who runs a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    /// The desktop app's window.
    Window,
    /// The local API: the CLI, scripts.
    Api,
    /// A paired phone, by its device name (audited with each decision).
    Phone { device: String },
    /// A member of a team server, by their own token: their role says what they may run, their
    /// inbox holds what is routed to them, and each decision and change is audited with them.
    Member(MemberView),
    /// No token, on a team server: may only make the team's first admin (`team_init`).
    Newcomer,
}

impl Caller {
    pub fn surface(&self) -> Surface {
        match self {
            Caller::Window => Surface::Window,
            Caller::Api | Caller::Member(_) | Caller::Newcomer => Surface::Api,
            Caller::Phone { .. } => Surface::Phone,
        }
    }

    /// Whether this caller's role lets it run a command needing `access`: a member by their
    /// role, a newcomer only to make the first admin; the machine's own surfaces (the window,
    /// the local token, a paired phone) as the table's surfaces say.
    pub fn may(&self, access: Access) -> bool {
        match self {
            Caller::Member(member) => member.role.may(access),
            Caller::Newcomer => access == Access::Bootstrap,
            Caller::Window | Caller::Api | Caller::Phone { .. } => true,
        }
    }

    /// Who the audit trail names for a change this caller makes.
    pub fn person(&self) -> &str {
        match self {
            Caller::Member(member) => &member.name,
            _ => "user",
        }
    }

    /// The engine's error as this caller reads it: the window names its own screens where the
    /// command line's text names a command.
    pub fn error(&self, error: EngineError) -> CommandError {
        let message = match self {
            Caller::Window => error.window_message(),
            _ => error.to_string(),
        };
        CommandError::new(error.code(), message)
    }
}

/// What a command needs beyond the engine: the desktop's own state, the agents' config files,
/// the phone inbox's listener. Every method answers "not available here" unless implemented.
pub trait Host: Send + Sync {
    fn app_info(&self) -> CommandResult<AppInfo> {
        Err(unavailable("app_info"))
    }
    fn tray_menu(&self) -> impl Future<Output = CommandResult<Vec<String>>> + Send {
        async { Err(unavailable("tray_menu")) }
    }
    fn take_navigation(&self) -> CommandResult<Option<Navigate>> {
        Err(unavailable("take_navigation"))
    }
    fn start_at_login(&self) -> CommandResult<bool> {
        Err(unavailable("start_at_login"))
    }
    fn set_start_at_login(&self, _enabled: bool) -> CommandResult<bool> {
        Err(unavailable("set_start_at_login"))
    }
    /// Claude Code, Codex, Claude Desktop as their own config files show them.
    fn agents(&self, _engine: &Engine) -> CommandResult<Vec<AgentStatus>> {
        Err(unavailable("agents"))
    }
    fn connect_agent(&self, _engine: &Engine, _agent: &str) -> CommandResult<ConnectReport> {
        Err(unavailable("connect_agent"))
    }
    fn disconnect_agent(&self, _agent: &str) -> CommandResult<ConnectReport> {
        Err(unavailable("disconnect_agent"))
    }
    /// Turns the phone inbox on at `listen` (`ADDR:PORT`), or off with `None`.
    fn set_remote_listen(&self, _engine: &Engine, _listen: Option<&str>) -> CommandResult<()> {
        Err(unavailable("set_remote_listen"))
    }
    fn pair_phone(&self, _engine: &Engine) -> CommandResult<Pairing> {
        Err(unavailable("pair_phone"))
    }
    /// This machine's addresses worth suggesting for the phone inbox.
    fn machine_addresses(&self) -> Vec<String> {
        Vec::new()
    }
    /// Grants changed without an engine event (a revoke): the tray reads them again.
    fn grants_changed(&self) {}
    /// Signs in to the remote server `name` in the browser and restarts it; what to tell the
    /// person (where its tokens are kept). The MCP client lives outside the engine.
    fn sign_in_server(
        &self,
        _engine: &Engine,
        _name: &str,
    ) -> impl Future<Output = CommandResult<String>> + Send {
        async { Err(unavailable("sign_in_server")) }
    }
    /// The person's team server and what waits there for them (the desktop reads it: the
    /// client of another engine lives outside this one); `None` when none is set.
    fn team_inbox(&self) -> impl Future<Output = CommandResult<Option<TeamInboxView>>> + Send {
        async { Err(unavailable("team_inbox")) }
    }
    /// Sets the person's team server, checked with their token before it is kept.
    fn set_team_server(
        &self,
        _url: &str,
        _token: &str,
        _certificate: Option<&str>,
    ) -> impl Future<Output = CommandResult<TeamInboxView>> + Send {
        async { Err(unavailable("set_team_server")) }
    }
    fn forget_team_server(&self) -> CommandResult<bool> {
        Err(unavailable("forget_team_server"))
    }
    /// Decides items on the team server, as the person.
    fn team_decide(
        &self,
        _decisions: Vec<DecisionRequest>,
    ) -> impl Future<Output = CommandResult<Vec<DecisionOutcome>>> + Send {
        async { Err(unavailable("team_decide")) }
    }
    /// The team server's members, read there as the person.
    fn team_server_members(&self) -> impl Future<Output = CommandResult<Vec<MemberView>>> + Send {
        async { Err(unavailable("team_server_members")) }
    }
    /// Hands an item on the team server to another member, as the person.
    fn team_delegate(
        &self,
        _approval_id: &str,
        _to: &str,
        _note: Option<&str>,
    ) -> impl Future<Output = CommandResult<()>> + Send {
        async { Err(unavailable("team_delegate")) }
    }
}

/// A host with nothing of its own: the phone's (its commands need none).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoHost;

impl Host for NoHost {}

fn unavailable(what: &str) -> CommandError {
    CommandError::new(
        ErrorCode::NotAllowed,
        format!("`{what}` is not available here (it needs the desktop app)"),
    )
}

/// Runs the command `name` with `args` (a JSON object) for `caller`: refused before anything
/// runs when the name is unknown, the arguments do not fit, or the caller's surface may not
/// call it.
pub async fn dispatch<H: Host>(
    engine: &Engine,
    host: &H,
    caller: &Caller,
    name: &str,
    args: Value,
) -> CommandResult<Value> {
    let command = AnyCommand::parse(name, args)?;
    if !command.surfaces().contains(&caller.surface()) {
        return Err(CommandError::new(
            ErrorCode::NotAllowed,
            format!(
                "`{name}` is not a command of the {} (see airlock_protocol::commands)",
                caller.surface().as_str()
            ),
        ));
    }
    let access = command.access();
    if !caller.may(access) {
        return Err(CommandError::new(
            ErrorCode::NotAllowed,
            match caller {
                Caller::Member(member) => format!(
                    "{} is a team {}; `{name}` needs {}",
                    member.name,
                    member.role.as_str(),
                    match access {
                        Access::Bootstrap => "a team without members",
                        Access::Read => "a member",
                        Access::Decide => "an approver or an admin",
                        Access::Admin => "an admin",
                    }
                ),
                _ => format!("`{name}` needs a team member's token"),
            },
        ));
    }
    let answer = Run {
        engine,
        host,
        caller,
    }
    .run(command)
    .await;
    // A member's change is audited with the person (a decision names them in its own row).
    if let Caller::Member(member) = caller
        && access == Access::Admin
        && answer.is_ok()
        && let Err(error) = engine.audit_member_command(&member.name, name)
    {
        tracing::warn!("cannot audit {}'s `{name}`: {error}", member.name);
    }
    answer
}

struct Run<'a, H> {
    engine: &'a Engine,
    host: &'a H,
    caller: &'a Caller,
}

/// The command's response as JSON, typed by the table: a handler that answers another type than
/// the command declares does not compile.
fn reply<C: Command>(_: &C, response: CommandResult<C::Response>) -> CommandResult<Value> {
    serde_json::to_value(response?)
        .map_err(|e| CommandError::new(ErrorCode::Internal, format!("cannot encode: {e}")))
}

impl<H: Host> Run<'_, H> {
    /// The engine's answer, its error as this caller reads it.
    fn as_command<T>(&self, result: crate::Result<T>) -> CommandResult<T> {
        result.map_err(|error| self.caller.error(error))
    }

    async fn run(&self, command: AnyCommand) -> CommandResult<Value> {
        use AnyCommand as C;
        let engine = self.engine;
        match command {
            C::AppInfoCommand(c) => reply(&c, self.host.app_info()),
            C::ListSessions(c) => reply(&c, self.as_command(engine.sessions())),
            C::Transcript(c) => reply(&c, self.as_command(engine.transcript(&c.session))),
            C::SendMessage(c) => {
                let chosen = match &c.provider {
                    Some(provider) => engine.choose_provider(&c.session, provider),
                    None => Ok(()),
                };
                let sent = chosen.and_then(|()| engine.send_message(&c.session, &c.text));
                reply(&c, self.as_command(sent))
            }
            C::WaitTurn(c) => {
                let outcome = engine.wait_turn(&c.session).await;
                reply(&c, self.as_command(outcome))
            }
            C::Status(c) => reply(
                &c,
                Ok(EngineStatus {
                    pid: std::process::id(),
                    version: env!("CARGO_PKG_VERSION").to_string(),
                    data_dir: engine.data_dir().to_path_buf(),
                    workspace: engine.workspace().to_path_buf(),
                    paused: engine.paused(),
                    storage_error: engine.storage_failure(),
                }),
            ),
            C::ShowWindow(c) => reply(&c, Ok(engine.show_frontend(c.approval_id.clone()))),
            C::SetSetting(c) => {
                let set = named_setting(&c.key)
                    .and_then(|key| self.as_command(engine.set_setting(key, &c.value)));
                reply(&c, set)
            }
            C::CancelTurn(c) => reply(&c, self.as_command(engine.cancel(&c.session))),
            C::Paused(c) => reply(&c, Ok(engine.paused())),
            C::SetPaused(c) => reply(&c, self.as_command(engine.set_paused(c.paused))),
            C::StorageFailure(c) => reply(&c, Ok(engine.storage_failure())),
            C::TrayMenu(c) => {
                let lines = self.host.tray_menu().await;
                reply(&c, lines)
            }
            C::TakeNavigation(c) => reply(&c, self.host.take_navigation()),
            C::SetSessionMode(c) => {
                let session = self.as_command(
                    engine
                        .set_mode(Some(&c.session), c.mode)
                        .and_then(|()| engine.session(&c.session)),
                );
                reply(&c, session)
            }
            C::Inbox(c) => {
                let items = match self.caller {
                    Caller::Member(member) => engine.inbox_for(member),
                    _ => engine.inbox(),
                };
                reply(&c, self.as_command(items))
            }
            C::Decide(mut c) => {
                let outcomes = self.decide(std::mem::take(&mut c.decisions), c.channel);
                reply(&c, outcomes)
            }
            C::AnswerElicitation(c) => {
                let answer = c.answer.clone();
                let answered = match self.caller {
                    Caller::Phone { device } => {
                        engine.answer_from_device(&c.approval_id, answer, device)
                    }
                    Caller::Window => engine.answer(&c.approval_id, answer, DecidedBy::Inbox),
                    Caller::Api => engine.answer(&c.approval_id, answer, DecidedBy::Api),
                    Caller::Member(_) => engine.answer(&c.approval_id, answer, DecidedBy::Member),
                    Caller::Newcomer => Err(EngineError::NotAllowed(
                        "answering needs a team member's token".into(),
                    )),
                };
                reply(&c, self.as_command(answered))
            }
            C::FileOnDiskCommand(c) => {
                reply(&c, self.as_command(engine.file_on_disk(&c.approval_id)))
            }
            C::RuleSuggestions(c) => {
                reply(&c, self.as_command(engine.suggest_rules(&c.approval_id)))
            }
            C::GrantOfferCommand(c) => {
                reply(&c, self.as_command(engine.grant_offer(&c.approval_id)))
            }
            C::InsightsCommand(c) => reply(&c, self.as_command(engine.insights())),
            C::Settings(c) => reply(&c, self.settings()),
            C::SetWorkspaceMode(c) => {
                reply(&c, self.as_command(engine.set_mode(None, Some(c.mode))))
            }
            C::SetProvider(c) => {
                reply(&c, self.as_command(engine.set_provider(c.provider.clone())))
            }
            C::SetProviderKey(c) => reply(
                &c,
                self.as_command(engine.set_provider_key(c.name.as_deref(), &c.key)),
            ),
            C::TestProvider(c) => {
                let answer = engine
                    .test_provider(c.provider.clone(), c.api_key.as_deref())
                    .await;
                reply(&c, self.as_command(answer))
            }
            C::SetToolSetting(c) => reply(
                &c,
                self.as_command(engine.set_tool_setting(&c.server, &c.tool, c.setting)),
            ),
            C::SetFromNotification(c) => reply(
                &c,
                self.as_command(engine.set_from_notification(
                    &c.server,
                    c.tool.as_deref(),
                    c.allow,
                )),
            ),
            C::AddRule(c) => {
                let rule = new_rule(&c.server, &c.tool, &c.pointer, &c.pattern, c.effect);
                reply(&c, self.as_command(engine.add_rule(rule)))
            }
            C::PreviewRule(c) => {
                let rule = new_rule(&c.server, &c.tool, &c.pointer, &c.pattern, c.effect);
                reply(&c, self.as_command(engine.preview_rule(&rule)))
            }
            C::RemoveRule(c) => reply(&c, self.as_command(engine.remove_rule(&c.id))),
            C::ListRules(c) => reply(&c, self.as_command(engine.rules())),
            C::RevokeRemembered(c) => {
                let revoked = self.as_command(engine.revoke_remembered(&c.id));
                self.host.grants_changed();
                reply(&c, revoked)
            }
            C::SetOption(c) => {
                let (key, value) = match c.option {
                    ShellOption::ApprovalTimeoutSecs(secs) => {
                        (Setting::ApprovalTimeoutSecs, json!(secs))
                    }
                    ShellOption::Notifications(on) => (Setting::Notifications, json!(on)),
                };
                reply(&c, self.as_command(engine.set_setting(key, &value)))
            }
            C::SetWorkspace(c) => reply(&c, self.as_command(engine.set_workspace(&c.folder))),
            C::SetStartAtLogin(c) => reply(&c, self.host.set_start_at_login(c.enabled)),
            C::Servers(c) => reply(&c, self.as_command(engine.servers())),
            C::SaveServer(c) => reply(
                &c,
                self.as_command(engine.add_server(c.name.trim(), c.config.clone())),
            ),
            C::PreviewImportServers(c) => reply(&c, preview_import(&c.text)),
            C::ServerChanges(c) => reply(&c, self.as_command(engine.server_changes(&c.name))),
            C::AcceptServerChanges(c) => reply(
                &c,
                self.as_command(engine.accept_server_changes(&c.name, &c.changes)),
            ),
            C::SetServerEnabled(c) => reply(
                &c,
                self.as_command(engine.set_server_enabled(&c.name, c.enabled)),
            ),
            C::SignInServer(c) => {
                let signed_in = self.host.sign_in_server(engine, &c.name).await;
                reply(&c, signed_in)
            }
            C::SetServerDefault(c) => reply(
                &c,
                self.as_command(engine.set_server_default(&c.name, c.default)),
            ),
            C::SetServerTrust(c) => reply(
                &c,
                self.as_command(engine.set_server_trust(&c.name, c.trust)),
            ),
            C::RemoveServer(c) => reply(&c, self.as_command(engine.remove_server(&c.name))),
            C::ImportServers(c) => reply(&c, import(engine, &c.text)),
            C::ServerLog(c) => reply(
                &c,
                self.as_command(
                    engine.server_log_tail(&c.name, c.lines.unwrap_or(DEFAULT_LOG_LINES)),
                ),
            ),
            C::Audit(c) => reply(
                &c,
                self.as_command(engine.audit(c.limit.unwrap_or(DEFAULT_AUDIT_ROWS))),
            ),
            C::Agents(c) => reply(&c, self.host.agents(engine)),
            C::AgentViews(c) => reply(&c, self.as_command(engine.agents())),
            C::AcpAgents(c) => reply(&c, self.as_command(engine.acp_agents())),
            C::SaveAcpAgent(c) => reply(
                &c,
                self.as_command(engine.save_acp_agent(&c.name, &c.command)),
            ),
            C::RemoveAcpAgent(c) => reply(&c, self.as_command(engine.remove_acp_agent(&c.name))),
            C::ChatWithAgent(c) => {
                let started =
                    engine.chat_with_agent(&c.agent, &c.session, &c.text, c.folder.as_deref());
                reply(&c, self.as_command(started))
            }
            C::ApplyAgentDefaults(c) => {
                reply(&c, self.as_command(engine.connect_agent_defaults(&c.agent)))
            }
            C::ConnectAgent(c) => reply(&c, self.host.connect_agent(engine, &c.agent)),
            C::DisconnectAgent(c) => reply(&c, self.host.disconnect_agent(&c.agent)),
            C::SetAgentFallback(c) => reply(
                &c,
                self.as_command(engine.set_agent_fallback(&c.agent, c.fallback)),
            ),
            C::IssueAgentToken(c) => reply(&c, self.as_command(engine.issue_agent_token(&c.agent))),
            C::RevokeAgentToken(c) => {
                reply(&c, self.as_command(engine.revoke_agent_token(&c.agent)))
            }
            C::Tools(c) => reply(&c, self.as_command(engine.tool_views())),
            C::Remembered(c) => reply(&c, self.as_command(engine.remembered())),
            C::Grants(c) => reply(&c, self.as_command(engine.grants())),
            C::Provider(c) => reply(&c, self.as_command(engine.provider_settings())),
            C::Providers(c) => reply(&c, self.as_command(engine.providers())),
            C::Devices(c) => reply(&c, self.as_command(engine.devices())),
            C::Remote(c) => reply(&c, self.remote()),
            C::SetRemoteListen(c) => {
                reply(&c, self.host.set_remote_listen(engine, c.listen.as_deref()))
            }
            C::PairPhone(c) => reply(&c, self.host.pair_phone(engine)),
            C::RevokeDevice(c) => reply(&c, self.as_command(engine.revoke_device(&c.id))),
            C::Push(c) => reply(&c, self.as_command(engine.push_ntfy_view())),
            C::SetPush(c) => reply(&c, self.as_command(engine.set_push_ntfy(c.push.clone()))),
            C::TeamInit(c) => reply(&c, self.as_command(engine.team_init(&c.name))),
            C::TeamAdd(c) => reply(
                &c,
                self.as_command(engine.team_add(
                    self.caller.person(),
                    &c.name,
                    c.role,
                    c.groups.clone(),
                )),
            ),
            C::TeamMembers(c) => reply(&c, self.as_command(engine.team_members())),
            C::TeamRemove(c) => reply(
                &c,
                self.as_command(engine.team_remove(self.caller.person(), &c.name)),
            ),
            C::TeamRoute(c) => reply(
                &c,
                self.as_command(engine.team_route(
                    self.caller.person(),
                    &c.server,
                    &c.tool,
                    c.pointer.as_deref(),
                    c.pattern.as_deref(),
                    &c.to,
                    c.quorum,
                    c.escalate_after_secs,
                    c.escalate_to.as_deref(),
                )),
            ),
            C::TeamRoutes(c) => reply(&c, self.as_command(engine.team_routes())),
            C::TeamUnroute(c) => reply(
                &c,
                self.as_command(engine.team_unroute(self.caller.person(), &c.id)),
            ),
            C::Delegate(c) => {
                let member = match self.caller {
                    Caller::Member(member) => Some(member),
                    _ => None,
                };
                reply(
                    &c,
                    self.as_command(engine.delegate(
                        member,
                        &c.approval_id,
                        &c.to,
                        c.note.as_deref(),
                    )),
                )
            }
            C::TeamInbox(c) => {
                let view = self.host.team_inbox().await;
                reply(&c, view)
            }
            C::SetTeamServer(c) => {
                let view = self
                    .host
                    .set_team_server(&c.url, &c.token, c.certificate.as_deref())
                    .await;
                reply(&c, view)
            }
            C::ForgetTeamServer(c) => reply(&c, self.host.forget_team_server()),
            C::TeamDecide(mut c) => {
                let outcomes = self
                    .host
                    .team_decide(std::mem::take(&mut c.decisions))
                    .await;
                reply(&c, outcomes)
            }
            C::TeamServerMembers(c) => {
                let members = self.host.team_server_members().await;
                reply(&c, members)
            }
            C::TeamDelegate(c) => {
                let handed = self
                    .host
                    .team_delegate(&c.approval_id, &c.to, c.note.as_deref())
                    .await;
                reply(&c, handed)
            }
        }
    }

    /// The whole batch in one durable transaction; each decision succeeds or is refused on its
    /// own. When the transaction fails (or the caller may not decide so: a phone's grant),
    /// nothing was decided: the command's error, or for the window every item carries it (the
    /// inbox shows each item's refusal).
    fn decide(
        &self,
        decisions: Vec<DecisionRequest>,
        channel: Option<airlock_protocol::Channel>,
    ) -> CommandResult<Vec<DecisionOutcome>> {
        let ids: Vec<String> = decisions.iter().map(|d| d.approval_id.clone()).collect();
        let outcomes = match self.caller {
            Caller::Window => self
                .engine
                .decide_many(decisions, channel.unwrap_or_default().into()),
            Caller::Api => self.engine.decide_many(decisions, DecidedBy::Api),
            Caller::Phone { device } => self.engine.decide_many_from_device(decisions, device),
            Caller::Member(member) => self.engine.decide_many_as_member(decisions, member),
            Caller::Newcomer => Err(EngineError::NotAllowed(
                "deciding needs a team member's token".into(),
            )),
        };
        match outcomes {
            Ok(outcomes) => Ok(ids
                .into_iter()
                .zip(outcomes)
                .map(|(approval_id, outcome)| match outcome {
                    // The API's scripts read the row decided; the window and the phone follow
                    // the inbox's events and get the outcome only.
                    Ok(row) => DecisionOutcome {
                        approval_id,
                        error: None,
                        approval: matches!(self.caller, Caller::Api | Caller::Member(_))
                            .then_some(row),
                    },
                    Err(error) => DecisionOutcome {
                        approval_id,
                        error: Some(self.caller.error(error)),
                        approval: None,
                    },
                })
                .collect()),
            Err(error) if *self.caller == Caller::Window => {
                let error = self.caller.error(error);
                Ok(ids
                    .into_iter()
                    .map(|approval_id| DecisionOutcome {
                        approval_id,
                        error: Some(error.clone()),
                        approval: None,
                    })
                    .collect())
            }
            Err(error) => Err(self.caller.error(error)),
        }
    }

    fn settings(&self) -> CommandResult<SettingsView> {
        let engine = self.engine;
        Ok(SettingsView {
            app: self.host.app_info()?,
            workspace_mode: self.as_command(engine.workspace_mode())?,
            provider: self.as_command(engine.provider_settings())?,
            approval_timeout_secs: self
                .as_command(engine.setting(Setting::ApprovalTimeoutSecs))?
                .and_then(|v| v.as_u64())
                .unwrap_or(0),
            notifications: notifications_enabled(engine),
            start_at_login: self.host.start_at_login()?,
            servers: self.as_command(engine.server_settings())?,
            tools: self.as_command(engine.tool_views())?,
            rules: self.as_command(engine.rules())?,
            remembered: self.as_command(engine.remembered())?,
            provider_kinds: crate::provider_kinds(),
        })
    }

    fn remote(&self) -> CommandResult<RemoteView> {
        let engine = self.engine;
        Ok(RemoteView {
            listen: self
                .as_command(engine.remote_listen())?
                .map(|a| a.to_string()),
            devices: self.as_command(engine.devices())?,
            push: self.as_command(engine.push_ntfy_view())?,
            addresses: self.host.machine_addresses(),
        })
    }
}

/// A new argument rule with a fresh id.
fn new_rule(
    server: &str,
    tool: &str,
    pointer: &str,
    pattern: &airlock_core::RulePattern,
    effect: airlock_core::RuleEffect,
) -> ArgRule {
    ArgRule {
        id: Engine::new_rule_id(),
        server: server.to_string(),
        tool: tool.to_string(),
        pointer: pointer.to_string(),
        pattern: pattern.clone(),
        effect,
    }
}

/// The setting `key` names, among those a person sets by name (`airlock settings set`); the
/// others have commands of their own (mode, paused).
fn named_setting(key: &str) -> CommandResult<Setting> {
    Setting::from_key(key)
        .filter(|setting| setting.cli_name().is_some())
        .ok_or_else(|| {
            let known: Vec<&str> = Setting::ALL
                .iter()
                .filter(|setting| setting.cli_name().is_some())
                .map(|setting| setting.key())
                .collect();
            CommandError::new(
                ErrorCode::UnknownSetting,
                format!("no setting '{key}'; known: {}", known.join(", ")),
            )
        })
}

/// Whether new requests raise a desktop notification.
pub fn notifications_enabled(engine: &Engine) -> bool {
    !matches!(
        engine.setting(Setting::Notifications),
        Ok(Some(Value::Bool(false)))
    )
}

fn parse_import(text: &str) -> CommandResult<Vec<airlock_core::server::ParsedServer>> {
    let config: Value = serde_json::from_str(text)
        .map_err(|e| CommandError::invalid(format!("not valid JSON: {e}")))?;
    let parsed = parse_mcp_servers_each(&config).map_err(CommandError::invalid)?;
    if parsed.is_empty() {
        return Err(CommandError::invalid("the config has no servers"));
    }
    Ok(parsed)
}

/// What [`import`] would add, and what it would refuse: an import starts every server it adds
/// (an `npx -y …` downloads and runs code), so the person sees this first and confirms.
pub fn preview_import(text: &str) -> CommandResult<ImportPreview> {
    let mut preview = ImportPreview {
        servers: Vec::new(),
        refused: Vec::new(),
    };
    for (name, parsed) in parse_import(text)? {
        match parsed.and_then(|config| config.validate().map(|()| config)) {
            Ok(config) => preview.servers.push(ImportCandidate {
                runs: config.describe(),
                name,
            }),
            Err(reason) => preview.refused.push(refused(name, reason)),
        }
    }
    Ok(preview)
}

/// A refused server with why, without the server's name the reason may start with (it is shown
/// beside it).
fn refused(name: String, reason: String) -> RefusedServer {
    let reason = reason
        .strip_prefix(&format!("server '{name}': "))
        .unwrap_or(&reason)
        .to_string();
    RefusedServer { name, reason }
}

/// Adds every server of a pasted Claude Desktop config (the whole file or its `mcpServers`
/// object) that it can; the others are reported, each with why. The one import of every
/// surface: the window, the API and the CLI.
pub fn import(engine: &Engine, text: &str) -> CommandResult<ImportReport> {
    let mut report = ImportReport {
        added: Vec::new(),
        refused: Vec::new(),
    };
    for (name, parsed) in parse_import(text)? {
        match parsed.and_then(|config| engine.add_server(&name, config).map_err(|e| e.to_string()))
        {
            Ok(()) => report.added.push(name),
            Err(reason) => report.refused.push(refused(name, reason)),
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_errors_keep_their_meaning_and_the_window_names_its_screens() {
        let error = Caller::Window.error(EngineError::UnknownSession("x".into()));
        assert_eq!(error.code, ErrorCode::UnknownSession);
        assert!(error.message.contains("'x'"), "{}", error.message);
        let json =
            serde_json::to_value(Caller::Window.error(EngineError::NoProvider)).unwrap_or_default();
        assert_eq!(json["code"], "no_provider");
        // The window points to its Settings screen, not to a shell command; the API and the
        // phone keep the command line's words.
        let message = json["message"].as_str().unwrap_or_default();
        assert!(message.contains("Settings"), "{message}");
        assert!(!message.contains("airlock "), "{message}");
        let api = Caller::Api.error(EngineError::NoProvider);
        assert_eq!(api.message, EngineError::NoProvider.to_string());
    }

    #[test]
    fn an_import_preview_refuses_what_cannot_run_and_a_config_without_servers() {
        let preview = preview_import(
            r#"{"mcpServers": {"ok": {"command": "true"}, "empty": {"command": " "}}}"#,
        );
        let preview = preview.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(preview.servers.len(), 1);
        assert_eq!(preview.refused.len(), 1);
        assert_eq!(preview.refused[0].name, "empty");
        // The reason is shown beside the name: it does not repeat it.
        assert_eq!(preview.refused[0].reason, "the command is empty");
        let none = preview_import("{}").err();
        assert_eq!(none.map(|e| e.code), Some(ErrorCode::Invalid));
    }
}
