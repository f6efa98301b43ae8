// Typed calls into the shell's commands (crates/resident/src/commands, run in the resident process: the window forwards every invoke) and its events.
import { invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';
import type { AddedRule } from './bindings/AddedRule';
import type { AgentFallback } from './bindings/AgentFallback';
import type { AgentStatus } from './bindings/AgentStatus';
import type { AuditRow } from './bindings/AuditRow';
import type { ConnectReport } from './bindings/ConnectReport';
import type { Channel } from './bindings/Channel';
import type { DecisionOutcome } from './bindings/DecisionOutcome';
import type { DecisionRequest } from './bindings/DecisionRequest';
import type { ElicitationAnswer } from './bindings/ElicitationAnswer';
import type { GrantOffer } from './bindings/GrantOffer';
import type { EngineEvent } from './bindings/EngineEvent';
import type { FileOnDisk } from './bindings/FileOnDisk';
import type { InboxItem } from './bindings/InboxItem';
import type { MessageRow } from './bindings/MessageRow';
import type { Mode } from './bindings/Mode';
import type { Navigate } from './bindings/Navigate';
import type { NtfyPush } from './bindings/NtfyPush';
import type { Pairing } from './bindings/Pairing';
import type { ProviderSettings } from './bindings/ProviderSettings';
import type { RemoteView } from './bindings/RemoteView';
import type { RuleEffect } from './bindings/RuleEffect';
import type { RuleRow } from './bindings/RuleRow';
import type { RulePattern } from './bindings/RulePattern';
import type { SessionRow } from './bindings/SessionRow';
import type { SettingsView } from './bindings/SettingsView';
import type { ShellOption } from './bindings/ShellOption';
import type { ToolChange } from './bindings/ToolChange';
import type { ImportPreview } from './bindings/ImportPreview';
import type { ImportReport } from './bindings/ImportReport';
import type { ServerConfig } from './bindings/ServerConfig';
import type { ServerDefault } from './bindings/ServerDefault';
import type { ServerView } from './bindings/ServerView';
import type { ToolSetting } from './bindings/ToolSetting';
import type { RuleSuggestion } from './bindings/RuleSuggestion';
import type { Insights } from './bindings/Insights';

export { approval, denial, errorMessage, offers } from './requests';

export const api = {
  /** Claude Code, Codex, Claude Desktop: connected or not, fallback, last request. */
  agents: () => invoke<AgentStatus[]>('agents'),
  connectAgent: (agent: string) => invoke<ConnectReport>('connect_agent', { agent }),
  disconnectAgent: (agent: string) => invoke<ConnectReport>('disconnect_agent', { agent }),
  setAgentFallback: (agent: string, fallback: AgentFallback) => invoke<void>('set_agent_fallback', { agent, fallback }),
  sessions: () => invoke<SessionRow[]>('list_sessions'),
  transcript: (session: string) => invoke<MessageRow[]>('transcript', { session }),
  send: (session: string, text: string) => invoke<SessionRow>('send_message', { session, text }),
  cancel: (session: string) => invoke<boolean>('cancel_turn', { session }),
  paused: () => invoke<boolean>('paused'),
  /** Why Airlock can no longer record decisions (the disk refused a write), if it cannot. */
  storageFailure: () => invoke<string | null>('storage_failure'),
  setPaused: (paused: boolean) => invoke<void>('set_paused', { paused }),
  setSessionMode: (session: string, mode: Mode | null) => invoke<SessionRow>('set_session_mode', { session, mode }),
  inbox: () => invoke<InboxItem[]>('inbox'),
  decide: (decisions: DecisionRequest[], channel: Channel) => invoke<DecisionOutcome[]>('decide', { decisions, channel }),
  answer: (approvalId: string, answer: ElicitationAnswer) => invoke<void>('answer_elicitation', { approvalId, answer }),
  /** What is on disk where a pending whole-file write would write (read beneath the writer's folder, bounded). */
  fileOnDisk: (approvalId: string) => invoke<FileOnDisk>('file_on_disk', { approvalId }),
  settings: () => invoke<SettingsView>('settings'),
  setWorkspaceMode: (mode: Mode) => invoke<void>('set_workspace_mode', { mode }),
  setProvider: (provider: ProviderSettings) => invoke<void>('set_provider', { provider }),
  /** The folder Airlock's own tools work in, from the next start on. */
  setWorkspace: (folder: string) => invoke<void>('set_workspace', { folder }),
  /** Keeps a pasted API key in the OS keyring (never in the store); `name: null` is the default provider. */
  setProviderKey: (name: string | null, key: string) => invoke<void>('set_provider_key', { name, key }),
  /** "Test connection": one real request to the provider as given (nothing saved); what came back. */
  testProvider: (provider: ProviderSettings, apiKey: string | null) => invoke<string>('test_provider', { provider, apiKey }),
  setToolSetting: (server: string, tool: string, setting: ToolSetting) =>
    invoke<void>('set_tool_setting', { server, tool, setting }),
  /** Whether a notification may approve a tool (or, with `tool` null, a server's tools); null forgets the choice. */
  setFromNotification: (server: string, tool: string | null, allow: boolean | null) =>
    invoke<void>('set_from_notification', { server, tool, allow }),
  addRule: (server: string, tool: string, pointer: string, pattern: RulePattern, effect: RuleEffect) =>
    invoke<AddedRule>('add_rule', { server, tool, pointer, pattern, effect }),
  rules: () => invoke<RuleRow[]>('list_rules'),
  /** Removes a rule (audited); it stops applying at once. */
  removeRule: (id: string) => invoke<void>('remove_rule', { id }),
  revokeRemembered: (id: string) => invoke<boolean>('revoke_remembered', { id }),
  setOption: (option: ShellOption) => invoke<void>('set_option', { option }),
  /** Starts Airlock at login, hidden in the tray (or no longer); returns whether it now does. */
  setStartAtLogin: (enabled: boolean) => invoke<boolean>('set_start_at_login', { enabled }),
  /** Where a window just created (to open an item) should go; null when it opens as it is. */
  takeNavigation: () => invoke<Navigate | null>('take_navigation'),
  servers: () => invoke<ServerView[]>('servers'),
  saveServer: (name: string, config: ServerConfig) => invoke<void>('save_server', { name, config }),
  setServerEnabled: (name: string, enabled: boolean) => invoke<void>('set_server_enabled', { name, enabled }),
  /** Removes a server; returns how many of its waiting requests were denied. */
  removeServer: (name: string) => invoke<number>('remove_server', { name }),
  setServerDefault: (name: string, value: ServerDefault) => invoke<void>('set_server_default', { name, default: value }),
  setServerTrust: (name: string, trust: boolean) => invoke<void>('set_server_trust', { name, trust }),
  /** What importing `text` would add and refuse; adds and starts nothing. */
  previewImportServers: (text: string) => invoke<ImportPreview>('preview_import_servers', { text }),
  /** Adds and starts the servers of `text` at once: call only after the person confirmed its preview. */
  importServers: (text: string) => invoke<ImportReport>('import_servers', { text }),
  /** The server's tools whose definition changed since the person last reviewed them. */
  serverChanges: (name: string) => invoke<ToolChange[]>('server_changes', { name }),
  /** Accepts the server's changed tools as they are now (their grants apply again); returns them. */
  acceptServerChanges: (name: string, changes: ToolChange[]) => invoke<ToolChange[]>('accept_server_changes', { name, changes }),
  serverLog: (name: string, lines: number | null) => invoke<string[]>('server_log', { name, lines }),
  audit: (limit?: number) => invoke<AuditRow[]>('audit', { limit: limit ?? null }),
  /** Rules that would let calls like this item's run, each previewed against History. */
  ruleSuggestions: (approvalId: string) => invoke<RuleSuggestion[]>('rule_suggestions', { approvalId }),
  /** What a grant made from this item covers by default (this chat, arguments like these). */
  grantOffer: (approvalId: string) => invoke<GrantOffer>('grant_offer', { approvalId }),
  /** Per-tool approval insights with suggestions, and requests per day. */
  insights: () => invoke<Insights>('insights'),
  /** The phone inbox: where it listens (null: off), paired devices, the ntfy push, this machine's addresses. */
  remote: () => invoke<RemoteView>('remote'),
  /** Turns the phone inbox on at ADDR:PORT (never every interface), or off with null. */
  setRemoteListen: (listen: string | null) => invoke<void>('set_remote_listen', { listen }),
  /** A one-time pairing code (5 minutes) with the page's URL and the certificate's fingerprint. */
  pairPhone: () => invoke<Pairing>('pair_phone'),
  /** The device's token is refused from now on; returns whether it was live. */
  revokeDevice: (id: string) => invoke<boolean>('revoke_device', { id }),
  /** The ntfy push, or off with null; a null token keeps the saved one, '' removes it. */
  setPush: (push: NtfyPush | null) => invoke<void>('set_push', { push }),
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
