// Generated from crates/protocol/src/commands.rs (the one command table) by
// `UPDATE_BINDINGS=1 cargo test -p airlock-resident bindings`. Do not edit.
import type { AcpAgentView } from './AcpAgentView';
import type { AddedRule } from './AddedRule';
import type { AgentFallback } from './AgentFallback';
import type { AgentStatus } from './AgentStatus';
import type { AgentToken } from './AgentToken';
import type { AgentToolDefaults } from './AgentToolDefaults';
import type { AgentView } from './AgentView';
import type { AppInfo } from './AppInfo';
import type { AuditRow } from './AuditRow';
import type { Channel } from './Channel';
import type { ConnectReport } from './ConnectReport';
import type { DecisionOutcome } from './DecisionOutcome';
import type { DecisionRequest } from './DecisionRequest';
import type { DeviceView } from './DeviceView';
import type { ElicitationAnswer } from './ElicitationAnswer';
import type { EngineStatus } from './EngineStatus';
import type { FileOnDisk } from './FileOnDisk';
import type { GrantOffer } from './GrantOffer';
import type { ImportPreview } from './ImportPreview';
import type { ImportReport } from './ImportReport';
import type { InboxItem } from './InboxItem';
import type { Insights } from './Insights';
import type { MemberView } from './MemberView';
import type { MessageRow } from './MessageRow';
import type { Mode } from './Mode';
import type { Navigate } from './Navigate';
import type { NewMember } from './NewMember';
import type { NtfyPush } from './NtfyPush';
import type { NtfyPushView } from './NtfyPushView';
import type { Pairing } from './Pairing';
import type { ProviderSettings } from './ProviderSettings';
import type { RememberedRow } from './RememberedRow';
import type { RemoteView } from './RemoteView';
import type { RouteView } from './RouteView';
import type { RuleEffect } from './RuleEffect';
import type { RulePattern } from './RulePattern';
import type { RuleRow } from './RuleRow';
import type { RuleSuggestion } from './RuleSuggestion';
import type { ServerConfig } from './ServerConfig';
import type { ServerDefault } from './ServerDefault';
import type { ServerView } from './ServerView';
import type { SessionRow } from './SessionRow';
import type { SettingsView } from './SettingsView';
import type { ShellOption } from './ShellOption';
import type { TeamInboxView } from './TeamInboxView';
import type { TeamRole } from './TeamRole';
import type { ToolChange } from './ToolChange';
import type { ToolSetting } from './ToolSetting';
import type { ToolView } from './ToolView';
import type { TurnOutcome } from './TurnOutcome';

/** Every command: its arguments and its response. */
export interface Commands {
  /** The app's version, data directory, workspace and where its API listens. */
  app_info: { args: Record<symbol, never>; response: AppInfo };
  list_sessions: { args: Record<symbol, never>; response: Array<SessionRow> };
  transcript: { args: { session: string, }; response: Array<MessageRow> };
  /** Starts a turn and returns at once; progress arrives as engine events. `provider` (a named one) is the session's from this message on. */
  send_message: { args: { session: string, text: string, provider?: string, }; response: SessionRow };
  /** Waits until the session's turn ends (at once when none runs); how it ended. */
  wait_turn: { args: { session: string, }; response: TurnOutcome };
  cancel_turn: { args: { session: string, }; response: boolean };
  /** Whether the agents are paused. */
  paused: { args: Record<symbol, never>; response: boolean };
  /** Pauses (or resumes) every agent; whether that changed anything. */
  set_paused: { args: { paused: boolean, }; response: boolean };
  /** The engine's process, version, data directory, workspace, pause and storage state. */
  status: { args: Record<symbol, never>; response: EngineStatus };
  /** Brings the desktop app's window forward (on an inbox item); false where there is none. */
  show_window: { args: { approvalId: string | null, }; response: boolean };
  /** Sets a setting `airlock settings set` names, after checking its kind. */
  set_setting: { args: { key: string, value: unknown, }; response: null };
  /** Why Airlock can no longer record decisions (the disk refused a write), if it cannot. */
  storage_failure: { args: Record<symbol, never>; response: string | null };
  /** The tray menu's changing lines as shown now; refused where there is no tray. */
  tray_menu: { args: Record<symbol, never>; response: Array<string> };
  /** Where a window just created (to open an item) should go; null when it opens as it is. */
  take_navigation: { args: Record<symbol, never>; response: Navigate | null };
  /** `mode: null` clears the session's override, so the workspace default applies again. */
  set_session_mode: { args: { session: string, mode: Mode | null, }; response: SessionRow };
  /** Every pending item. */
  inbox: { args: Record<symbol, never>; response: Array<InboxItem> };
  /** Decides a batch in order, in one transaction; a refused decision does not stop the others. */
  decide: { args: { decisions: Array<DecisionRequest>,  /**  * Which part of the window decided (the window only; others are who they are).  */ channel?: Channel, }; response: Array<DecisionOutcome> };
  /** Answers an MCP server's elicitation (its form). */
  answer_elicitation: { args: { approvalId: string, answer: ElicitationAnswer, }; response: null };
  /** What is on disk where a pending whole-file write would write. */
  file_on_disk: { args: { approvalId: string, }; response: FileOnDisk };
  /** Rules that would let calls like this item's run, each previewed against History. */
  rule_suggestions: { args: { approvalId: string, }; response: Array<RuleSuggestion> };
  /** What a grant made from this item covers by default. */
  grant_offer: { args: { approvalId: string, }; response: GrantOffer };
  /** Per-tool approval insights with suggestions, and requests per day. */
  insights: { args: Record<symbol, never>; response: Insights };
  /** Everything the Settings screen shows. */
  settings: { args: Record<symbol, never>; response: SettingsView };
  set_workspace_mode: { args: { mode: Mode, }; response: null };
  set_provider: { args: { provider: ProviderSettings, }; response: null };
  /** Keeps a pasted API key in the OS keyring (never in the store); `name: null` is the default provider. */
  set_provider_key: { args: { name: string | null, key: string, }; response: null };
  /** "Test connection": one real request to the provider as given (nothing saved); what came back. */
  test_provider: { args: { provider: ProviderSettings, apiKey: string | null, }; response: string };
  set_tool_setting: { args: { server: string, tool: string, setting: ToolSetting, }; response: null };
  /** Whether a notification may approve a tool (or, with `tool` null, a server's tools); null forgets the choice. */
  set_from_notification: { args: { server: string, tool: string | null, allow: boolean | null, }; response: null };
  /** Adds an argument rule (an identical one already there says so). */
  add_rule: { args: { server: string, tool: string, pointer: string, pattern: RulePattern, effect: RuleEffect, }; response: AddedRule };
  /** Removes a rule (audited); it stops applying at once. */
  remove_rule: { args: { id: string, }; response: null };
  /** What a rule would have matched in History, without adding it. */
  preview_rule: { args: { server: string, tool: string, pointer: string, pattern: RulePattern, effect: RuleEffect, }; response: RuleSuggestion };
  /** Every argument rule, oldest first. */
  list_rules: { args: Record<symbol, never>; response: Array<RuleRow> };
  revoke_remembered: { args: { id: string, }; response: boolean };
  set_option: { args: { option: ShellOption, }; response: null };
  /** The folder Airlock's own tools work in, from the next start on. */
  set_workspace: { args: { folder: string, }; response: null };
  /** Starts Airlock at login, hidden in the tray (or no longer); whether it now does. */
  set_start_at_login: { args: { enabled: boolean, }; response: boolean };
  servers: { args: Record<symbol, never>; response: Array<ServerView> };
  /** Adds a server, or replaces the definition of the one with this name (its settings stay). */
  save_server: { args: { name: string, config: ServerConfig, }; response: null };
  /** What importing `text` would add and refuse; adds and starts nothing. */
  preview_import_servers: { args: { text: string, }; response: ImportPreview };
  /** The server's tools whose definition changed since the person last reviewed them. */
  server_changes: { args: { name: string, }; response: Array<ToolChange> };
  /** Accepts the server's changed tools as reviewed; refused when they changed since. */
  accept_server_changes: { args: { name: string, changes: Array<ToolChange>, }; response: Array<ToolChange> };
  set_server_enabled: { args: { name: string, enabled: boolean, }; response: null };
  /** Signs in to a remote server (OAuth in the system browser, answered on a one-time loopback listener) and restarts it; says where its tokens are kept (the OS keyring, or a file). */
  sign_in_server: { args: { name: string, }; response: string };
  set_server_default: { args: { name: string, default: ServerDefault, }; response: null };
  set_server_trust: { args: { name: string, trust: boolean, }; response: null };
  /** Removes a server; returns how many of its waiting requests were denied. */
  remove_server: { args: { name: string, }; response: number };
  /** Adds every valid server of a pasted Claude Desktop config (call after the person confirmed its preview) and reports each refused one with why. */
  import_servers: { args: { text: string, }; response: ImportReport };
  server_log: { args: { name: string, lines: number | null, }; response: Array<string> };
  /** The audit trail, newest last. */
  audit: { args: { limit: number | null, }; response: Array<AuditRow> };
  /** Claude Code, Codex, Claude Desktop: connected or not, fallback, last request. */
  agents: { args: Record<symbol, never>; response: Array<AgentStatus> };
  connect_agent: { args: { agent: string, }; response: ConnectReport };
  disconnect_agent: { args: { agent: string, }; response: ConnectReport };
  /** The agents as Airlock knows them: fallback and last request (no config files read); the window lists the programs that ask through the approval clients from it. */
  agent_views: { args: Record<symbol, never>; response: Array<AgentView> };
  /** `airlock connect`'s settings inside Airlock: the agent's read-only tools need no approval, unless the person chose otherwise. */
  apply_agent_defaults: { args: { agent: string, }; response: AgentToolDefaults };
  set_agent_fallback: { args: { agent: string, fallback: AgentFallback, }; response: null };
  /** A new token of the agent's own (shown once; it replaces the one it had): it may post that agent's calls and read their decisions, nothing else. */
  issue_agent_token: { args: { agent: string, }; response: AgentToken };
  /** The agent's own token is refused from now on; whether it had one. */
  revoke_agent_token: { args: { agent: string, }; response: boolean };
  /** The agents Airlock hosts over ACP (`airlock agents add NAME --acp -- COMMAND…`). */
  acp_agents: { args: Record<symbol, never>; response: Array<AcpAgentView> };
  /** Registers an agent to host over ACP (or changes its command: the program, then its arguments). */
  save_acp_agent: { args: { name: string, command: Array<string>, }; response: null };
  /** Forgets a hosted agent; whether there was one. */
  remove_acp_agent: { args: { name: string, }; response: boolean };
  /** Starts (or continues) a chat hosted by an ACP agent in `folder` (the workspace unless given); returns at once. */
  chat_with_agent: { args: { agent: string, session: string, text: string, folder?: string, }; response: SessionRow };
  /** Every tool of every server with its setting and where the setting comes from. */
  tools: { args: Record<symbol, never>; response: Array<ToolView> };
  /** The remembered decisions, with the timed and counted grants among them. */
  remembered: { args: Record<symbol, never>; response: Array<RememberedRow> };
  /** Only the timed and counted grants, with what is left of each. */
  grants: { args: Record<symbol, never>; response: Array<RememberedRow> };
  /** The default model provider, if one is set. */
  provider: { args: Record<symbol, never>; response: ProviderSettings | null };
  /** Every named provider. */
  providers: { args: Record<symbol, never>; response: Array<ProviderSettings> };
  /** The paired devices, revoked ones included. */
  devices: { args: Record<symbol, never>; response: Array<DeviceView> };
  /** The phone inbox: where it listens (null: off), paired devices, the ntfy push, this machine's addresses. */
  remote: { args: Record<symbol, never>; response: RemoteView };
  /** Turns the phone inbox on at ADDR:PORT (never every interface), or off with null. */
  set_remote_listen: { args: { listen: string | null, }; response: null };
  /** A one-time pairing code (5 minutes) with the page's URL and the certificate's fingerprint. */
  pair_phone: { args: Record<symbol, never>; response: Pairing };
  /** The device's token is refused from now on; whether it was live. */
  revoke_device: { args: { id: string, }; response: boolean };
  /** The ntfy push as set (its token only as whether one is kept), or null when off. */
  push: { args: Record<symbol, never>; response: NtfyPushView | null };
  /** The ntfy push, or off with null; a null token keeps the saved one, '' removes it. */
  set_push: { args: { push: NtfyPush | null, }; response: null };
  /** Makes the first admin of a team server that has no member yet (no token needed, and refused once there is a member); their token, shown once. */
  team_init: { args: { name: string, }; response: NewMember };
  /** Adds a member (admin, approver or viewer) in these groups; their token, shown once. */
  team_add: { args: { name: string, role: TeamRole, groups: Array<string>, }; response: NewMember };
  /** The team's members (never their tokens). */
  team_members: { args: Record<symbol, never>; response: Array<MemberView> };
  /** Removes a member: their token is refused from now on; whether there was one. */
  team_remove: { args: { name: string, }; response: boolean };
  /** Sends the calls of SERVER/TOOL (whose argument at `pointer` matches `pattern`, when given) to a person or group, needing `quorum` approvals, escalated after a while. */
  team_route: { args: { server: string, tool: string, pointer: string | null, pattern: string | null, to: string, quorum: number | null, escalateAfterSecs: number | null, escalateTo: string | null, }; response: RouteView };
  /** The routes, oldest first (the first that matches a call applies). */
  team_routes: { args: Record<symbol, never>; response: Array<RouteView> };
  /** Removes a route (items already routed keep theirs); whether there was one. */
  team_unroute: { args: { id: string, }; response: boolean };
  /** Hands a waiting item to another person, with a note for them. */
  delegate: { args: { approvalId: string, to: string, note: string | null, }; response: null };
  /** The person's team server beside this desktop's engine and what waits for them there; null when none is set. */
  team_inbox: { args: Record<symbol, never>; response: TeamInboxView | null };
  /** Sets the person's team server (`https://HOST:PORT`, or `http://127.0.0.1:PORT`) with their member token, kept in the OS keyring; refused unless the server accepts the token. `certificate`: the server's own PEM certificate to trust instead of the system's. */
  set_team_server: { args: { url: string, token: string, certificate?: string, }; response: TeamInboxView };
  /** Forgets the team server and the person's token; whether one was set. */
  forget_team_server: { args: Record<symbol, never>; response: boolean };
  /** Decides items of the team server's inbox there, as the person (their token). */
  team_decide: { args: { decisions: Array<DecisionRequest>, }; response: Array<DecisionOutcome> };
  /** The members of the person's team server, read there with their token: whom an item of theirs can be handed to ("Ask someone else…"). */
  team_server_members: { args: Record<symbol, never>; response: Array<MemberView> };
  /** Hands an item of the team server's inbox to another member there, with a note, as the person (their token; the server's own rule: only what is theirs to decide). */
  team_delegate: { args: { approvalId: string, to: string, note: string | null, }; response: null };
}

export type CommandName = keyof Commands;
export type CommandArgs<K extends CommandName> = Commands[K]['args'];
export type CommandResponse<K extends CommandName> = Commands[K]['response'];

/** The surfaces that may call each command (the phone's subset is explicit). */
export const COMMAND_SURFACES = {
  app_info: ['window'],
  list_sessions: ['window', 'api'],
  transcript: ['window', 'api'],
  send_message: ['window', 'api'],
  wait_turn: ['api'],
  cancel_turn: ['window', 'api'],
  paused: ['window', 'api'],
  set_paused: ['window', 'api'],
  status: ['api'],
  show_window: ['api'],
  set_setting: ['api'],
  storage_failure: ['window', 'api'],
  tray_menu: ['window'],
  take_navigation: ['window'],
  set_session_mode: ['window', 'api'],
  inbox: ['window', 'api', 'phone'],
  decide: ['window', 'api', 'phone'],
  answer_elicitation: ['window', 'api', 'phone'],
  file_on_disk: ['window', 'api'],
  rule_suggestions: ['window', 'api'],
  grant_offer: ['window', 'api'],
  insights: ['window', 'api'],
  settings: ['window'],
  set_workspace_mode: ['window', 'api'],
  set_provider: ['window', 'api'],
  set_provider_key: ['window', 'api'],
  test_provider: ['window', 'api'],
  set_tool_setting: ['window', 'api'],
  set_from_notification: ['window', 'api'],
  add_rule: ['window', 'api'],
  remove_rule: ['window', 'api'],
  preview_rule: ['window', 'api'],
  list_rules: ['window', 'api'],
  revoke_remembered: ['window', 'api'],
  set_option: ['window', 'api'],
  set_workspace: ['window', 'api'],
  set_start_at_login: ['window'],
  servers: ['window', 'api'],
  save_server: ['window', 'api'],
  preview_import_servers: ['window', 'api'],
  server_changes: ['window', 'api'],
  accept_server_changes: ['window', 'api'],
  set_server_enabled: ['window', 'api'],
  sign_in_server: ['window', 'api'],
  set_server_default: ['window', 'api'],
  set_server_trust: ['window', 'api'],
  remove_server: ['window', 'api'],
  import_servers: ['window', 'api'],
  server_log: ['window', 'api'],
  audit: ['window', 'api'],
  agents: ['window'],
  connect_agent: ['window'],
  disconnect_agent: ['window'],
  agent_views: ['window', 'api'],
  apply_agent_defaults: ['api'],
  set_agent_fallback: ['window', 'api'],
  issue_agent_token: ['window', 'api'],
  revoke_agent_token: ['window', 'api'],
  acp_agents: ['window', 'api'],
  save_acp_agent: ['window', 'api'],
  remove_acp_agent: ['window', 'api'],
  chat_with_agent: ['window', 'api'],
  tools: ['window', 'api'],
  remembered: ['window', 'api'],
  grants: ['window', 'api'],
  provider: ['window', 'api'],
  providers: ['window', 'api'],
  devices: ['window', 'api'],
  remote: ['window', 'api'],
  set_remote_listen: ['window', 'api'],
  pair_phone: ['window', 'api'],
  revoke_device: ['window', 'api'],
  push: ['window', 'api'],
  set_push: ['window', 'api'],
  team_init: ['api'],
  team_add: ['api'],
  team_members: ['window', 'api'],
  team_remove: ['api'],
  team_route: ['api'],
  team_routes: ['window', 'api'],
  team_unroute: ['api'],
  delegate: ['window', 'api'],
  team_inbox: ['window'],
  set_team_server: ['window'],
  forget_team_server: ['window'],
  team_decide: ['window'],
  team_server_members: ['window'],
  team_delegate: ['window'],
} as const;

/** The commands a paired phone may call. */
export type PhoneCommand = { [K in CommandName]: 'phone' extends (typeof COMMAND_SURFACES)[K][number] ? K : never }[CommandName];

/** Sends one command (its name and arguments) and resolves with its response. */
export type Transport = (name: CommandName, args: unknown) => Promise<unknown>;

/** A client typed by the table over `transport` (the window's invoke, the phone's HTTPS). */
export function commandClient<K extends CommandName = CommandName>(transport: Transport) {
  return <C extends K>(name: C, args: CommandArgs<C>): Promise<CommandResponse<C>> =>
    transport(name, args) as Promise<CommandResponse<C>>;
}
