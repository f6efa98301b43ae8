//! The one vocabulary between the engine and everything that talks to it: the local API, the
//! desktop shell, the CLI and (through ts-rs) the UI. Requests, views, events and error codes
//! live here and nowhere else; the engine returns these, never the store's own types.

pub mod agents;
pub mod command_types;
pub mod commands;
pub mod desktop;
pub mod error;
pub mod events;
pub mod insights;
pub mod provider;
pub mod remote;
pub mod requests;
pub mod rows;
pub mod team;
pub mod views;

pub use agents::{
    AcpAgentView, AgentAnswer, AgentCall, AgentCallState, AgentConnection, AgentEvent, AgentStatus,
    AgentToken, AgentToolDefaults, AgentVerdict, AgentView, ConnectReport,
};
pub use command_types::{
    AppInfo, Channel, DecisionOutcome, EngineStatus, ImportCandidate, ImportPreview, ImportReport,
    Navigate, RefusedServer, RemoteView, SettingsView, ShellOption,
};
pub use commands::{AnyCommand, Command, CommandSpec, Surface};
pub use error::{CommandError, CommandResult, ErrorCode};
pub use events::{DecidedItem, EngineEvent, InboxItem, TurnOutcome};
pub use insights::{
    DayCount, InsightSuggestion, Insights, RuleSuggestion, SuggestedAction, ToolInsight,
};
pub use provider::{HostedMcpServer, ProviderKind, ProviderKindInfo, ProviderSettings};
pub use remote::{DeviceView, NtfyPush, NtfyPushView, Pairing};
pub use requests::{
    Approval, DECISIONS_BODY_LIMIT, Decision, DecisionKind, DecisionRequest, ElicitationAction,
    ElicitationAnswer, GrantArgs, GrantOffer, GrantRequest, GrantScope,
};
pub use rows::{
    AddedRule, AgentOrigin, ApprovalRow, AuditRow, CallRow, MessageRow, RememberedRow, RuleRow,
    ServerRow, SessionRow,
};
pub use team::{Access, Assignee, MemberView, NewMember, RouteView, TeamInboxView, TeamRole};
pub use views::{FileOnDisk, ServerStatus, ServerView, ToolChange, ToolView};
