//! The one command table: every command the window, the local API and the phone can run is
//! declared here once — its name, its arguments (one struct, camelCase on the wire as the
//! window's invoke sends them), its response, and the surfaces that may call it. One dispatcher
//! (`airlock_engine::commands`) runs them; the UI's client (`ui/src/lib/bindings/commands.ts`)
//! and the CLI's (`ApiClient::call`) are generated from, or typed by, this table. Errors are a
//! [`CommandError`] whose `code` is an [`crate::ErrorCode`].
//!
//! How to add a command: add a line to the table below (doc, type, name, arguments, response,
//! surfaces), handle its variant in the dispatcher's `match` (the compiler asks for it), then
//! regenerate the UI's bindings (`UPDATE_BINDINGS=1 cargo test -p airlock-resident bindings`).

use crate::error::CommandError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Where the local API and the phone take a command: `POST {COMMANDS_PATH}{name}` with its
/// arguments; the answer is its response, or `{"error", "code"}` with the code's HTTP status.
pub const COMMANDS_PATH: &str = "/v1/commands/";

/// Where a command may be called from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Surface {
    /// The desktop app's window (its invoke, forwarded to the resident).
    Window,
    /// The local API (`POST /v1/commands/{name}`): the CLI and scripts.
    Api,
    /// A paired phone: only what it needs to list what waits and decide it.
    Phone,
}

impl Surface {
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Window => "window",
            Surface::Api => "api",
            Surface::Phone => "phone",
        }
    }
}

/// One command of the table: its arguments are `Self`, its answer [`Command::Response`].
pub trait Command: Serialize + Send + Sync + 'static {
    const NAME: &'static str;
    const SURFACES: &'static [Surface];
    type Response: Serialize + Send + 'static;
}

/// A command as the table lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    pub name: &'static str,
    pub surfaces: &'static [Surface],
}

impl CommandSpec {
    pub fn allows(&self, surface: Surface) -> bool {
        self.surfaces.contains(&surface)
    }
}

/// The spec of the command called `name`, if there is one.
pub fn spec(name: &str) -> Option<&'static CommandSpec> {
    COMMANDS.iter().find(|spec| spec.name == name)
}

/// The names of the commands `surface` may call, in the table's order.
pub fn names_for(surface: Surface) -> Vec<&'static str> {
    COMMANDS
        .iter()
        .filter(|spec| spec.allows(surface))
        .map(|spec| spec.name)
        .collect()
}

fn parse_args<T: serde::de::DeserializeOwned>(name: &str, args: Value) -> Result<T, CommandError> {
    // An invoke without arguments sends nothing (or null): a command without any takes it.
    let args = if args.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        args
    };
    serde_json::from_value(args)
        .map_err(|error| CommandError::invalid(format!("invalid arguments to `{name}`: {error}")))
}

macro_rules! commands {
    ($(
        $(#[doc = $doc:literal])*
        $command:ident = $name:literal { $($(#[$field_meta:meta])* $field:ident : $field_type:ty),* $(,)? }
            -> $response:ty, [$($surface:ident),+];
    )*) => {
        $(
            $(#[doc = $doc])*
            #[derive(Debug, Clone, Serialize, Deserialize)]
            #[cfg_attr(feature = "ts", derive(ts_rs::TS))]
            #[serde(rename_all = "camelCase")]
            pub struct $command {
                $($(#[$field_meta])* pub $field: $field_type,)*
            }

            impl Command for $command {
                const NAME: &'static str = $name;
                const SURFACES: &'static [Surface] = &[$(Surface::$surface),+];
                type Response = $response;
            }
        )*

        /// Every command, in the table's order.
        pub const COMMANDS: &[CommandSpec] = &[$(CommandSpec {
            name: $name,
            surfaces: &[$(Surface::$surface),+],
        }),*];

        /// One command with its arguments, parsed from its name and a JSON object; the
        /// dispatcher matches on it, so a command the table declares and it does not run does
        /// not compile.
        #[derive(Debug, Clone)]
        pub enum AnyCommand {
            $($command($command),)*
        }

        impl AnyCommand {
            /// The command `name` with `args`; an unknown name or malformed arguments are
            /// refused (`invalid`) before anything runs.
            pub fn parse(name: &str, args: Value) -> Result<Self, CommandError> {
                match name {
                    $($name => parse_args(name, args).map(AnyCommand::$command),)*
                    other => Err(CommandError::invalid(format!("no command `{other}`"))),
                }
            }

            pub fn name(&self) -> &'static str {
                match self {
                    $(AnyCommand::$command(_) => $name,)*
                }
            }

            pub fn surfaces(&self) -> &'static [Surface] {
                match self {
                    $(AnyCommand::$command(_) => <$command as Command>::SURFACES,)*
                }
            }
        }

        #[cfg(feature = "ts")]
        fn typescript_entries(cfg: &ts_rs::Config, imports: &mut std::collections::BTreeSet<String>) -> Vec<String> {
            use ts_rs::TS;
            let mut entries = Vec::new();
            $(
                named_types::<$command>(cfg, imports, false);
                named_types::<$response>(cfg, imports, true);
                let docs: Vec<&str> = vec![$($doc.trim()),*];
                entries.push(format!(
                    "{docs}  {name}: {{ args: {args}; response: {response} }};",
                    docs = if docs.is_empty() { String::new() } else { format!("  /** {} */\n", docs.join(" ")) },
                    name = $name,
                    args = <$command as TS>::inline(cfg).replace('\n', " "),
                    response = <$response as TS>::name(cfg),
                ));
            )*
            entries
        }

        #[cfg(feature = "ts")]
        fn export_dependencies(cfg: &ts_rs::Config) -> Result<(), ts_rs::ExportError> {
            $(
                export_named::<$command>(cfg, false)?;
                export_named::<$response>(cfg, true)?;
            )*
            Ok(())
        }
    };
}

/// Collects the names of the exported types visited (those with a file of their own).
#[cfg(feature = "ts")]
struct Names<'a>(
    &'a ts_rs::Config,
    &'a mut std::collections::BTreeSet<String>,
);

#[cfg(feature = "ts")]
impl ts_rs::TypeVisitor for Names<'_> {
    fn visit<U: ts_rs::TS + 'static + ?Sized>(&mut self) {
        if U::output_path().is_some() {
            self.1.insert(U::ident(self.0));
        }
    }
}

/// Exports each exported type visited, with its own dependencies.
#[cfg(feature = "ts")]
struct Export<'a>(&'a ts_rs::Config, Result<(), ts_rs::ExportError>);

#[cfg(feature = "ts")]
impl ts_rs::TypeVisitor for Export<'_> {
    fn visit<U: ts_rs::TS + 'static + ?Sized>(&mut self) {
        if self.1.is_ok() && U::output_path().is_some() {
            self.1 = U::export_all(self.0);
        }
    }
}

/// Visits the exported types `T` names: its fields' (arguments), or itself and its generics
/// (a response such as `Vec<InboxItem>`).
#[cfg(feature = "ts")]
fn walk<T: ts_rs::TS + 'static + ?Sized, V: ts_rs::TypeVisitor>(visitor: &mut V, itself: bool) {
    if itself {
        visitor.visit::<T>();
        T::visit_generics(visitor);
    } else {
        T::visit_dependencies(visitor);
    }
}

#[cfg(feature = "ts")]
fn named_types<T: ts_rs::TS + 'static + ?Sized>(
    cfg: &ts_rs::Config,
    into: &mut std::collections::BTreeSet<String>,
    itself: bool,
) {
    walk::<T, _>(&mut Names(cfg, into), itself);
}

#[cfg(feature = "ts")]
fn export_named<T: ts_rs::TS + 'static + ?Sized>(
    cfg: &ts_rs::Config,
    itself: bool,
) -> Result<(), ts_rs::ExportError> {
    let mut export = Export(cfg, Ok(()));
    walk::<T, _>(&mut export, itself);
    export.1
}

/// The UI's typed client of the table (`commands.ts`): each command's arguments and response,
/// the surfaces that may call it, and `commandClient`, which types a transport by the table.
#[cfg(feature = "ts")]
pub fn typescript_client(cfg: &ts_rs::Config) -> String {
    let mut imports = std::collections::BTreeSet::new();
    let entries = typescript_entries(cfg, &mut imports);
    let mut out = String::from(
        "// Generated from crates/protocol/src/commands.rs (the one command table) by\n\
         // `UPDATE_BINDINGS=1 cargo test -p airlock-resident bindings`. Do not edit.\n",
    );
    for name in &imports {
        out.push_str(&format!("import type {{ {name} }} from './{name}';\n"));
    }
    out.push_str(
        "\n/** Every command: its arguments and its response. */\nexport interface Commands {\n",
    );
    for entry in entries {
        out.push_str(&entry);
        out.push('\n');
    }
    out.push_str("}\n\nexport type CommandName = keyof Commands;\n");
    out.push_str("export type CommandArgs<K extends CommandName> = Commands[K]['args'];\n");
    out.push_str(
        "export type CommandResponse<K extends CommandName> = Commands[K]['response'];\n\n",
    );
    out.push_str(
        "/** The surfaces that may call each command (the phone's subset is explicit). */\n",
    );
    out.push_str("export const COMMAND_SURFACES = {\n");
    for spec in COMMANDS {
        let surfaces: Vec<String> = spec
            .surfaces
            .iter()
            .map(|s| format!("'{}'", s.as_str()))
            .collect();
        out.push_str(&format!("  {}: [{}],\n", spec.name, surfaces.join(", ")));
    }
    out.push_str("} as const;\n\n");
    out.push_str(
        "/** The commands a paired phone may call. */\n\
         export type PhoneCommand = { [K in CommandName]: 'phone' extends (typeof COMMAND_SURFACES)[K][number] ? K : never }[CommandName];\n\n\
         /** Sends one command (its name and arguments) and resolves with its response. */\n\
         export type Transport = (name: CommandName, args: unknown) => Promise<unknown>;\n\n\
         /** A client typed by the table over `transport` (the window's invoke, the phone's HTTPS). */\n\
         export function commandClient<K extends CommandName = CommandName>(transport: Transport) {\n  \
           return <C extends K>(name: C, args: CommandArgs<C>): Promise<CommandResponse<C>> =>\n    \
             transport(name, args) as Promise<CommandResponse<C>>;\n\
         }\n",
    );
    out
}

/// Writes `commands.ts` and every type it names into `cfg`'s directory.
#[cfg(feature = "ts")]
pub fn export_typescript(cfg: &ts_rs::Config) -> Result<(), ts_rs::ExportError> {
    export_dependencies(cfg)?;
    let path = cfg.out_dir().join("commands.ts");
    std::fs::write(&path, typescript_client(cfg)).map_err(ts_rs::ExportError::from)
}

use crate::command_types::{
    Channel, DecisionOutcome, ImportPreview, ImportReport, Navigate, RemoteView, SettingsView,
    ShellOption,
};
use crate::team::{Access, MemberView, NewMember, RouteView, TeamInboxView, TeamRole};
use crate::{
    AddedRule, AgentStatus, AuditRow, ConnectReport, DecisionRequest, DeviceView,
    ElicitationAnswer, FileOnDisk, GrantOffer, InboxItem, MessageRow, NtfyPush, Pairing,
    ProviderSettings, RememberedRow, RuleRow, RuleSuggestion, ServerView, SessionRow, ToolChange,
    ToolView,
};
use airlock_core::{
    AgentFallback, Mode, RuleEffect, RulePattern, ServerConfig, ServerDefault, ToolSetting,
};

commands! {
    /// The app's version, data directory, workspace and where its API listens.
    AppInfoCommand = "app_info" {} -> crate::command_types::AppInfo, [Window];
    ListSessions = "list_sessions" {} -> Vec<SessionRow>, [Window, Api];
    Transcript = "transcript" { session: String } -> Vec<MessageRow>, [Window, Api];
    /// Starts a turn and returns at once; progress arrives as engine events. `provider` (a
    /// named one) is the session's from this message on.
    SendMessage = "send_message" {
        session: String,
        text: String,
        #[serde(default)]
        #[cfg_attr(feature = "ts", ts(optional))]
        provider: Option<String>,
    } -> SessionRow, [Window, Api];
    /// Waits until the session's turn ends (at once when none runs); how it ended.
    WaitTurn = "wait_turn" { session: String } -> crate::TurnOutcome, [Api];
    CancelTurn = "cancel_turn" { session: String } -> bool, [Window, Api];
    /// Whether the agents are paused.
    Paused = "paused" {} -> bool, [Window, Api];
    /// Pauses (or resumes) every agent; whether that changed anything.
    SetPaused = "set_paused" { paused: bool } -> bool, [Window, Api];
    /// The engine's process, version, data directory, workspace, pause and storage state.
    Status = "status" {} -> crate::command_types::EngineStatus, [Api];
    /// Brings the desktop app's window forward (on an inbox item); false where there is none.
    ShowWindow = "show_window" { approval_id: Option<String> } -> bool, [Api];
    /// Sets a setting `airlock settings set` names, after checking its kind.
    SetSetting = "set_setting" {
        key: String,
        #[cfg_attr(feature = "ts", ts(type = "unknown"))]
        value: Value,
    } -> (), [Api];
    /// Why Airlock can no longer record decisions (the disk refused a write), if it cannot.
    StorageFailure = "storage_failure" {} -> Option<String>, [Window, Api];
    /// The tray menu's changing lines as shown now; refused where there is no tray.
    TrayMenu = "tray_menu" {} -> Vec<String>, [Window];
    /// Where a window just created (to open an item) should go; null when it opens as it is.
    TakeNavigation = "take_navigation" {} -> Option<Navigate>, [Window];
    /// `mode: null` clears the session's override, so the workspace default applies again.
    SetSessionMode = "set_session_mode" { session: String, mode: Option<Mode> } -> SessionRow, [Window, Api];
    /// Every pending item.
    Inbox = "inbox" {} -> Vec<InboxItem>, [Window, Api, Phone];
    /// Decides a batch in order, in one transaction; a refused decision does not stop the others.
    Decide = "decide" {
        decisions: Vec<DecisionRequest>,
        /// Which part of the window decided (the window only; others are who they are).
        #[serde(default)]
        #[cfg_attr(feature = "ts", ts(optional))]
        channel: Option<Channel>,
    } -> Vec<DecisionOutcome>, [Window, Api, Phone];
    /// Answers an MCP server's elicitation (its form).
    AnswerElicitation = "answer_elicitation" { approval_id: String, answer: ElicitationAnswer } -> (), [Window, Api, Phone];
    /// What is on disk where a pending whole-file write would write.
    FileOnDiskCommand = "file_on_disk" { approval_id: String } -> FileOnDisk, [Window, Api];
    /// Rules that would let calls like this item's run, each previewed against History.
    RuleSuggestions = "rule_suggestions" { approval_id: String } -> Vec<RuleSuggestion>, [Window, Api];
    /// What a grant made from this item covers by default.
    GrantOfferCommand = "grant_offer" { approval_id: String } -> GrantOffer, [Window, Api];
    /// Per-tool approval insights with suggestions, and requests per day.
    InsightsCommand = "insights" {} -> crate::Insights, [Window, Api];
    /// Everything the Settings screen shows.
    Settings = "settings" {} -> SettingsView, [Window];
    SetWorkspaceMode = "set_workspace_mode" { mode: Mode } -> (), [Window, Api];
    SetProvider = "set_provider" { provider: ProviderSettings } -> (), [Window, Api];
    /// Keeps a pasted API key in the OS keyring (never in the store); `name: null` is the default provider.
    SetProviderKey = "set_provider_key" { name: Option<String>, key: String } -> (), [Window, Api];
    /// "Test connection": one real request to the provider as given (nothing saved); what came back.
    TestProvider = "test_provider" { provider: ProviderSettings, api_key: Option<String> } -> String, [Window, Api];
    SetToolSetting = "set_tool_setting" { server: String, tool: String, setting: ToolSetting } -> (), [Window, Api];
    /// Whether a notification may approve a tool (or, with `tool` null, a server's tools); null forgets the choice.
    SetFromNotification = "set_from_notification" { server: String, tool: Option<String>, allow: Option<bool> } -> (), [Window, Api];
    /// Adds an argument rule (an identical one already there says so).
    AddRule = "add_rule" { server: String, tool: String, pointer: String, pattern: RulePattern, effect: RuleEffect } -> AddedRule, [Window, Api];
    /// Removes a rule (audited); it stops applying at once.
    RemoveRule = "remove_rule" { id: String } -> (), [Window, Api];
    /// What a rule would have matched in History, without adding it.
    PreviewRule = "preview_rule" { server: String, tool: String, pointer: String, pattern: RulePattern, effect: RuleEffect } -> RuleSuggestion, [Window, Api];
    /// Every argument rule, oldest first.
    ListRules = "list_rules" {} -> Vec<RuleRow>, [Window, Api];
    RevokeRemembered = "revoke_remembered" { id: String } -> bool, [Window, Api];
    SetOption = "set_option" { option: ShellOption } -> (), [Window, Api];
    /// The folder Airlock's own tools work in, from the next start on.
    SetWorkspace = "set_workspace" { folder: String } -> (), [Window, Api];
    /// Starts Airlock at login, hidden in the tray (or no longer); whether it now does.
    SetStartAtLogin = "set_start_at_login" { enabled: bool } -> bool, [Window];
    Servers = "servers" {} -> Vec<ServerView>, [Window, Api];
    /// Adds a server, or replaces the definition of the one with this name (its settings stay).
    SaveServer = "save_server" { name: String, config: ServerConfig } -> (), [Window, Api];
    /// What importing `text` would add and refuse; adds and starts nothing.
    PreviewImportServers = "preview_import_servers" { text: String } -> ImportPreview, [Window, Api];
    /// The server's tools whose definition changed since the person last reviewed them.
    ServerChanges = "server_changes" { name: String } -> Vec<ToolChange>, [Window, Api];
    /// Accepts the server's changed tools as reviewed; refused when they changed since.
    AcceptServerChanges = "accept_server_changes" { name: String, changes: Vec<ToolChange> } -> Vec<ToolChange>, [Window, Api];
    SetServerEnabled = "set_server_enabled" { name: String, enabled: bool } -> (), [Window, Api];
    /// Signs in to a remote server (OAuth in the system browser, answered on a one-time loopback
    /// listener) and restarts it; says where its tokens are kept (the OS keyring, or a file).
    SignInServer = "sign_in_server" { name: String } -> String, [Window, Api];
    SetServerDefault = "set_server_default" { name: String, default: ServerDefault } -> (), [Window, Api];
    SetServerTrust = "set_server_trust" { name: String, trust: bool } -> (), [Window, Api];
    /// Removes a server; returns how many of its waiting requests were denied.
    RemoveServer = "remove_server" { name: String } -> usize, [Window, Api];
    /// Adds every valid server of a pasted Claude Desktop config (call after the person confirmed its preview) and reports each refused one with why.
    ImportServers = "import_servers" { text: String } -> ImportReport, [Window, Api];
    ServerLog = "server_log" { name: String, lines: Option<usize> } -> Vec<String>, [Window, Api];
    /// The audit trail, newest last.
    Audit = "audit" { limit: Option<usize> } -> Vec<AuditRow>, [Window, Api];
    /// Claude Code, Codex, Claude Desktop: connected or not, fallback, last request.
    Agents = "agents" {} -> Vec<AgentStatus>, [Window];
    ConnectAgent = "connect_agent" { agent: String } -> ConnectReport, [Window];
    DisconnectAgent = "disconnect_agent" { agent: String } -> ConnectReport, [Window];
    /// The agents as Airlock knows them: fallback and last request (no config files read); the
    /// window lists the programs that ask through the approval clients from it.
    AgentViews = "agent_views" {} -> Vec<crate::AgentView>, [Window, Api];
    /// `airlock connect`'s settings inside Airlock: the agent's read-only tools need no approval, unless the person chose otherwise.
    ApplyAgentDefaults = "apply_agent_defaults" { agent: String } -> crate::AgentToolDefaults, [Api];
    SetAgentFallback = "set_agent_fallback" { agent: String, fallback: AgentFallback } -> (), [Window, Api];
    /// A new token of the agent's own (shown once; it replaces the one it had): it may post that agent's calls and read their decisions, nothing else.
    IssueAgentToken = "issue_agent_token" { agent: String } -> crate::AgentToken, [Window, Api];
    /// The agent's own token is refused from now on; whether it had one.
    RevokeAgentToken = "revoke_agent_token" { agent: String } -> bool, [Window, Api];
    /// The agents Airlock hosts over ACP (`airlock agents add NAME --acp -- COMMAND…`).
    AcpAgents = "acp_agents" {} -> Vec<crate::AcpAgentView>, [Window, Api];
    /// Registers an agent to host over ACP (or changes its command: the program, then its arguments).
    SaveAcpAgent = "save_acp_agent" { name: String, command: Vec<String> } -> (), [Window, Api];
    /// Forgets a hosted agent; whether there was one.
    RemoveAcpAgent = "remove_acp_agent" { name: String } -> bool, [Window, Api];
    /// Starts (or continues) a chat hosted by an ACP agent in `folder` (the workspace unless given); returns at once.
    ChatWithAgent = "chat_with_agent" {
        agent: String,
        session: String,
        text: String,
        #[serde(default)]
        #[cfg_attr(feature = "ts", ts(optional))]
        folder: Option<String>,
    } -> SessionRow, [Window, Api];
    /// Every tool of every server with its setting and where the setting comes from.
    Tools = "tools" {} -> Vec<ToolView>, [Window, Api];
    /// The remembered decisions, with the timed and counted grants among them.
    Remembered = "remembered" {} -> Vec<RememberedRow>, [Window, Api];
    /// Only the timed and counted grants, with what is left of each.
    Grants = "grants" {} -> Vec<RememberedRow>, [Window, Api];
    /// The default model provider, if one is set.
    Provider = "provider" {} -> Option<ProviderSettings>, [Window, Api];
    /// Every named provider.
    Providers = "providers" {} -> Vec<ProviderSettings>, [Window, Api];
    /// The paired devices, revoked ones included.
    Devices = "devices" {} -> Vec<DeviceView>, [Window, Api];
    /// The phone inbox: where it listens (null: off), paired devices, the ntfy push, this machine's addresses.
    Remote = "remote" {} -> RemoteView, [Window, Api];
    /// Turns the phone inbox on at ADDR:PORT (never every interface), or off with null.
    SetRemoteListen = "set_remote_listen" { listen: Option<String> } -> (), [Window, Api];
    /// A one-time pairing code (5 minutes) with the page's URL and the certificate's fingerprint.
    PairPhone = "pair_phone" {} -> Pairing, [Window, Api];
    /// The device's token is refused from now on; whether it was live.
    RevokeDevice = "revoke_device" { id: String } -> bool, [Window, Api];
    /// The ntfy push as set (its token only as whether one is kept), or null when off.
    Push = "push" {} -> Option<crate::NtfyPushView>, [Window, Api];
    /// The ntfy push, or off with null; a null token keeps the saved one, '' removes it.
    SetPush = "set_push" { push: Option<NtfyPush> } -> (), [Window, Api];
    /// Makes the first admin of a team server that has no member yet (no token needed, and
    /// refused once there is a member); their token, shown once.
    TeamInit = "team_init" { name: String } -> NewMember, [Api];
    /// Adds a member (admin, approver or viewer) in these groups; their token, shown once.
    TeamAdd = "team_add" {
        name: String,
        role: TeamRole,
        #[serde(default)]
        groups: Vec<String>,
    } -> NewMember, [Api];
    /// The team's members (never their tokens).
    TeamMembers = "team_members" {} -> Vec<MemberView>, [Window, Api];
    /// Removes a member: their token is refused from now on; whether there was one.
    TeamRemove = "team_remove" { name: String } -> bool, [Api];
    /// Sends the calls of SERVER/TOOL (whose argument at `pointer` matches `pattern`, when
    /// given) to a person or group, needing `quorum` approvals, escalated after a while.
    TeamRoute = "team_route" {
        server: String,
        tool: String,
        pointer: Option<String>,
        pattern: Option<String>,
        to: String,
        quorum: Option<u32>,
        escalate_after_secs: Option<u64>,
        escalate_to: Option<String>,
    } -> RouteView, [Api];
    /// The routes, oldest first (the first that matches a call applies).
    TeamRoutes = "team_routes" {} -> Vec<RouteView>, [Window, Api];
    /// Removes a route (items already routed keep theirs); whether there was one.
    TeamUnroute = "team_unroute" { id: String } -> bool, [Api];
    /// Hands a waiting item to another person, with a note for them.
    Delegate = "delegate" { approval_id: String, to: String, note: Option<String> } -> (), [Window, Api];
    /// The person's team server beside this desktop's engine and what waits for them there; null
    /// when none is set.
    TeamInbox = "team_inbox" {} -> Option<TeamInboxView>, [Window];
    /// Sets the person's team server (`https://HOST:PORT`, or `http://127.0.0.1:PORT`) with their
    /// member token, kept in the OS keyring; refused unless the server accepts the token.
    /// `certificate`: the server's own PEM certificate to trust instead of the system's.
    SetTeamServer = "set_team_server" {
        url: String,
        token: String,
        #[serde(default)]
        #[cfg_attr(feature = "ts", ts(optional))]
        certificate: Option<String>,
    } -> TeamInboxView, [Window];
    /// Forgets the team server and the person's token; whether one was set.
    ForgetTeamServer = "forget_team_server" {} -> bool, [Window];
    /// Decides items of the team server's inbox there, as the person (their token).
    TeamDecide = "team_decide" { decisions: Vec<DecisionRequest> } -> Vec<DecisionOutcome>, [Window];
    /// The members of the person's team server, read there with their token: whom an item of
    /// theirs can be handed to ("Ask someone else…").
    TeamServerMembers = "team_server_members" {} -> Vec<MemberView>, [Window];
    /// Hands an item of the team server's inbox to another member there, with a note, as the
    /// person (their token; the server's own rule: only what is theirs to decide).
    TeamDelegate = "team_delegate" { approval_id: String, to: String, note: Option<String> } -> (), [Window];
}

impl AnyCommand {
    /// What the command asks of a member's role: one exhaustive list, so a command added to the
    /// table without saying so does not compile. Reading is a viewer's, deciding an approver's,
    /// everything that changes what runs or who decides an admin's.
    pub fn access(&self) -> Access {
        use AnyCommand as C;
        match self {
            C::TeamInit(_) => Access::Bootstrap,
            C::AppInfoCommand(_)
            | C::ListSessions(_)
            | C::Transcript(_)
            | C::WaitTurn(_)
            | C::Paused(_)
            | C::Status(_)
            | C::StorageFailure(_)
            | C::TrayMenu(_)
            | C::TakeNavigation(_)
            | C::Inbox(_)
            | C::FileOnDiskCommand(_)
            | C::RuleSuggestions(_)
            | C::GrantOfferCommand(_)
            | C::InsightsCommand(_)
            | C::Settings(_)
            | C::PreviewRule(_)
            | C::ListRules(_)
            | C::Servers(_)
            | C::PreviewImportServers(_)
            | C::ServerChanges(_)
            | C::ServerLog(_)
            | C::Audit(_)
            | C::Agents(_)
            | C::AgentViews(_)
            | C::Tools(_)
            | C::Remembered(_)
            | C::Grants(_)
            | C::Provider(_)
            | C::Providers(_)
            | C::Devices(_)
            | C::Remote(_)
            | C::Push(_)
            | C::TeamMembers(_)
            | C::TeamRoutes(_)
            | C::TeamInbox(_)
            | C::TeamServerMembers(_)
            | C::AcpAgents(_) => Access::Read,
            C::Decide(_)
            | C::AnswerElicitation(_)
            | C::Delegate(_)
            | C::TeamDecide(_)
            | C::TeamDelegate(_) => Access::Decide,
            C::SendMessage(_)
            | C::CancelTurn(_)
            | C::SetPaused(_)
            | C::ShowWindow(_)
            | C::SetSetting(_)
            | C::SetSessionMode(_)
            | C::SetWorkspaceMode(_)
            | C::SetProvider(_)
            | C::SetProviderKey(_)
            | C::TestProvider(_)
            | C::SetToolSetting(_)
            | C::SetFromNotification(_)
            | C::AddRule(_)
            | C::RemoveRule(_)
            | C::RevokeRemembered(_)
            | C::SetOption(_)
            | C::SetWorkspace(_)
            | C::SetStartAtLogin(_)
            | C::SaveServer(_)
            | C::AcceptServerChanges(_)
            | C::SetServerEnabled(_)
            | C::SetServerDefault(_)
            | C::SetServerTrust(_)
            | C::RemoveServer(_)
            | C::SignInServer(_)
            | C::IssueAgentToken(_)
            | C::RevokeAgentToken(_)
            | C::SaveAcpAgent(_)
            | C::RemoveAcpAgent(_)
            | C::ChatWithAgent(_)
            | C::ImportServers(_)
            | C::ConnectAgent(_)
            | C::DisconnectAgent(_)
            | C::ApplyAgentDefaults(_)
            | C::SetAgentFallback(_)
            | C::SetRemoteListen(_)
            | C::PairPhone(_)
            | C::RevokeDevice(_)
            | C::SetPush(_)
            | C::TeamAdd(_)
            | C::TeamRemove(_)
            | C::TeamRoute(_)
            | C::TeamUnroute(_)
            | C::SetTeamServer(_)
            | C::ForgetTeamServer(_) => Access::Admin,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_declared_once() {
        let mut names: Vec<&str> = COMMANDS.iter().map(|spec| spec.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COMMANDS.len());
    }

    /// The phone's subset, listed: a command reaches a paired phone only by being added here
    /// and in the table.
    #[test]
    fn the_phone_may_list_what_waits_and_decide_it_nothing_else() {
        assert_eq!(
            names_for(Surface::Phone),
            ["inbox", "decide", "answer_elicitation"]
        );
    }

    #[test]
    fn arguments_are_parsed_by_the_table_and_unknown_commands_refused() {
        let parsed = AnyCommand::parse("inbox", Value::Null);
        assert!(matches!(parsed, Ok(AnyCommand::Inbox(_))));
        let parsed = AnyCommand::parse(
            "answer_elicitation",
            serde_json::json!({"approvalId": "apr_1", "answer": {"action": "decline"}}),
        );
        assert!(
            matches!(&parsed, Ok(AnyCommand::AnswerElicitation(a)) if a.approval_id == "apr_1"),
            "{parsed:?}"
        );
        let refused = AnyCommand::parse("set_paused", serde_json::json!({"paused": "yes"}));
        assert!(refused.is_err_and(|e| e.code == crate::ErrorCode::Invalid));
        let unknown = AnyCommand::parse("format_disk", Value::Null);
        assert!(unknown.is_err_and(|e| e.message.contains("no command")));
    }
}
