// The window's calls: the one command table (crates/protocol/src/commands.rs) through its
// generated client (bindings/commands.ts), sent by Tauri's invoke to the resident process, which
// runs each through the one dispatcher. Argument and response types are the table's; this file
// only names the calls as the screens use them.
import { invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';
import type { AgentFallback } from './bindings/AgentFallback';
import type { Channel } from './bindings/Channel';
import { commandClient } from './bindings/commands';
import type { DecisionRequest } from './bindings/DecisionRequest';
import type { ElicitationAnswer } from './bindings/ElicitationAnswer';
import type { EngineEvent } from './bindings/EngineEvent';
import type { Mode } from './bindings/Mode';
import type { Navigate } from './bindings/Navigate';
import type { NtfyPush } from './bindings/NtfyPush';
import type { ProviderSettings } from './bindings/ProviderSettings';
import type { RuleEffect } from './bindings/RuleEffect';
import type { RulePattern } from './bindings/RulePattern';
import type { ShellOption } from './bindings/ShellOption';
import type { ToolChange } from './bindings/ToolChange';
import type { ServerConfig } from './bindings/ServerConfig';
import type { ServerDefault } from './bindings/ServerDefault';
import type { ToolSetting } from './bindings/ToolSetting';

export { approval, denial, errorMessage, offers } from './requests';

/** Every command of the table, typed by it, over the window's invoke. */
const call = commandClient((name, args) => invoke(name, args as Record<string, unknown>));

export const api = {
  /** Claude Code, Codex, Claude Desktop: connected or not, fallback, last request. */
  agents: () => call('agents', {}),
  agentViews: () => call('agent_views', {}),
  connectAgent: (agent: string) => call('connect_agent', { agent }),
  disconnectAgent: (agent: string) => call('disconnect_agent', { agent }),
  setAgentFallback: (agent: string, fallback: AgentFallback) => call('set_agent_fallback', { agent, fallback }),
  /** A new token of the agent's (or program's) own, shown once; it replaces the one it had. */
  issueAgentToken: (agent: string) => call('issue_agent_token', { agent }),
  /** Its own token is refused from now on; whether it had one. */
  revokeAgentToken: (agent: string) => call('revoke_agent_token', { agent }),
  /** The agents Airlock hosts over ACP. */
  acpAgents: () => call('acp_agents', {}),
  /** Registers an agent to host over ACP: the program, then its arguments. */
  saveAcpAgent: (name: string, command: string[]) => call('save_acp_agent', { name, command }),
  removeAcpAgent: (name: string) => call('remove_acp_agent', { name }),
  /** Starts (or continues) a chat hosted by the agent, in `folder` (the workspace unless given). */
  chatWithAgent: (agent: string, session: string, text: string, folder?: string) =>
    call('chat_with_agent', { agent, session, text, folder }),
  sessions: () => call('list_sessions', {}),
  transcript: (session: string) => call('transcript', { session }),
  send: (session: string, text: string) => call('send_message', { session, text }),
  cancel: (session: string) => call('cancel_turn', { session }),
  paused: () => call('paused', {}),
  /** Why Airlock can no longer record decisions (the disk refused a write), if it cannot. */
  storageFailure: () => call('storage_failure', {}),
  setPaused: (paused: boolean) => call('set_paused', { paused }),
  setSessionMode: (session: string, mode: Mode | null) => call('set_session_mode', { session, mode }),
  inbox: () => call('inbox', {}),
  decide: (decisions: DecisionRequest[], channel: Channel) => call('decide', { decisions, channel }),
  answer: (approvalId: string, answer: ElicitationAnswer) => call('answer_elicitation', { approvalId, answer }),
  /** What is on disk where a pending whole-file write would write (read beneath the writer's folder, bounded). */
  fileOnDisk: (approvalId: string) => call('file_on_disk', { approvalId }),
  settings: () => call('settings', {}),
  setWorkspaceMode: (mode: Mode) => call('set_workspace_mode', { mode }),
  setProvider: (provider: ProviderSettings) => call('set_provider', { provider }),
  /** The folder Airlock's own tools work in, from the next start on. */
  setWorkspace: (folder: string) => call('set_workspace', { folder }),
  /** Keeps a pasted API key in the OS keyring (never in the store); `name: null` is the default provider. */
  setProviderKey: (name: string | null, key: string) => call('set_provider_key', { name, key }),
  /** "Test connection": one real request to the provider as given (nothing saved); what came back. */
  testProvider: (provider: ProviderSettings, apiKey: string | null) => call('test_provider', { provider, apiKey }),
  setToolSetting: (server: string, tool: string, setting: ToolSetting) =>
    call('set_tool_setting', { server, tool, setting }),
  /** Whether a notification may approve a tool (or, with `tool` null, a server's tools); null forgets the choice. */
  setFromNotification: (server: string, tool: string | null, allow: boolean | null) =>
    call('set_from_notification', { server, tool, allow }),
  addRule: (server: string, tool: string, pointer: string, pattern: RulePattern, effect: RuleEffect) =>
    call('add_rule', { server, tool, pointer, pattern, effect }),
  rules: () => call('list_rules', {}),
  /** Removes a rule (audited); it stops applying at once. */
  removeRule: (id: string) => call('remove_rule', { id }),
  revokeRemembered: (id: string) => call('revoke_remembered', { id }),
  setOption: (option: ShellOption) => call('set_option', { option }),
  /** Starts Airlock at login, hidden in the tray (or no longer); returns whether it now does. */
  setStartAtLogin: (enabled: boolean) => call('set_start_at_login', { enabled }),
  /** Where a window just created (to open an item) should go; null when it opens as it is. */
  takeNavigation: () => call('take_navigation', {}),
  servers: () => call('servers', {}),
  saveServer: (name: string, config: ServerConfig) => call('save_server', { name, config }),
  setServerEnabled: (name: string, enabled: boolean) => call('set_server_enabled', { name, enabled }),
  /** Signs in to a remote server in the browser (waits for it); says where its tokens are kept. */
  signInServer: (name: string) => call('sign_in_server', { name }),
  /** Removes a server; returns how many of its waiting requests were denied. */
  removeServer: (name: string) => call('remove_server', { name }),
  setServerDefault: (name: string, value: ServerDefault) => call('set_server_default', { name, default: value }),
  setServerTrust: (name: string, trust: boolean) => call('set_server_trust', { name, trust }),
  /** What importing `text` would add and refuse; adds and starts nothing. */
  previewImportServers: (text: string) => call('preview_import_servers', { text }),
  /** Adds and starts the servers of `text` at once: call only after the person confirmed its preview. */
  importServers: (text: string) => call('import_servers', { text }),
  /** The server's tools whose definition changed since the person last reviewed them. */
  serverChanges: (name: string) => call('server_changes', { name }),
  /** Accepts the server's changed tools as they are now (their grants apply again); returns them. */
  acceptServerChanges: (name: string, changes: ToolChange[]) => call('accept_server_changes', { name, changes }),
  serverLog: (name: string, lines: number | null) => call('server_log', { name, lines }),
  audit: (limit?: number) => call('audit', { limit: limit ?? null }),
  /** Rules that would let calls like this item's run, each previewed against History. */
  ruleSuggestions: (approvalId: string) => call('rule_suggestions', { approvalId }),
  /** What a grant made from this item covers by default (this chat, arguments like these). */
  grantOffer: (approvalId: string) => call('grant_offer', { approvalId }),
  /** Per-tool approval insights with suggestions, and requests per day. */
  insights: () => call('insights', {}),
  /** The phone inbox: where it listens (null: off), paired devices, the ntfy push, this machine's addresses. */
  remote: () => call('remote', {}),
  /** Turns the phone inbox on at ADDR:PORT (never every interface), or off with null. */
  setRemoteListen: (listen: string | null) => call('set_remote_listen', { listen }),
  /** A one-time pairing code (5 minutes) with the page's URL and the certificate's fingerprint. */
  pairPhone: () => call('pair_phone', {}),
  /** The device's token is refused from now on; returns whether it was live. */
  revokeDevice: (id: string) => call('revoke_device', { id }),
  /** The ntfy push, or off with null; a null token keeps the saved one, '' removes it. */
  setPush: (push: NtfyPush | null) => call('set_push', { push }),
  /** The person's team server and what waits there for them; null when none is set. */
  teamInbox: () => call('team_inbox', {}),
  /** Sets the team server with the person's member token (kept in the OS keyring); refused unless the server accepts it. */
  setTeamServer: (url: string, token: string, certificate?: string) => call('set_team_server', { url, token, certificate }),
  /** Forgets the team server and the token; whether one was set. */
  forgetTeamServer: () => call('forget_team_server', {}),
  /** Decides items of the team server's inbox there, as the person. */
  teamDecide: (decisions: DecisionRequest[]) => call('team_decide', { decisions }),
  /** The team server's members, read there with the person's token (whom "Ask someone else…" offers). */
  teamServerMembers: () => call('team_server_members', {}),
  /** Hands an item of the team server's inbox to another member there, with a note, as the person. */
  teamDelegate: (approvalId: string, to: string, note: string | null) => call('team_delegate', { approvalId, to, note }),
  /** This engine's own team members: empty unless it is a team server. */
  teamMembers: () => call('team_members', {}),
  /** Hands a local item to a member of this engine's team, with a note for them. */
  delegate: (approvalId: string, to: string, note: string | null) => call('delegate', { approvalId, to, note }),
};

export function onEngineEvent(handler: (event: EngineEvent) => void): Promise<UnlistenFn> {
  return listen<EngineEvent>('engine-event', (e) => handler(e.payload));
}

export function onResync(handler: () => void): Promise<UnlistenFn> {
  return listen('engine-resync', () => handler());
}

export function onNavigate(handler: (n: Navigate) => void): Promise<UnlistenFn> {
  return listen<Navigate>('navigate', (e) => handler(e.payload));
}
