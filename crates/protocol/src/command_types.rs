//! What the commands of [`crate::commands`] take and give that no other part of the vocabulary
//! uses: the window's channel, a batch's outcomes, an import's report, the Settings and Phone
//! screens' views, where the window should go.

use crate::error::CommandError;
use crate::{
    DeviceView, NtfyPushView, ProviderKindInfo, ProviderSettings, RememberedRow, RuleRow,
    ServerRow, ToolView,
};
use airlock_core::{DecidedBy, Mode};
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Which part of the window decided, recorded in the audit trail.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Channel {
    #[default]
    Inbox,
    Chat,
}

impl From<Channel> for DecidedBy {
    fn from(channel: Channel) -> Self {
        match channel {
            Channel::Inbox => DecidedBy::Inbox,
            Channel::Chat => DecidedBy::Chat,
        }
    }
}

/// The outcome of one decision of a batch: each succeeds or is refused on its own.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DecisionOutcome {
    pub approval_id: String,
    pub error: Option<CommandError>,
    /// The item as decided, when it was (what the local API's `/v1/decisions` answers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub approval: Option<crate::ApprovalRow>,
}

/// What an import did: the servers added (or whose definition was replaced) and those refused,
/// each with why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportReport {
    pub added: Vec<String>,
    pub refused: Vec<RefusedServer>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RefusedServer {
    pub name: String,
    pub reason: String,
}

/// One server an import would add, as the person confirms it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportCandidate {
    pub name: String,
    /// What it runs or reaches (see `ServerConfig::describe`), hidden characters escaped.
    pub runs: String,
}

/// What an import would do, shown before anything starts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportPreview {
    pub servers: Vec<ImportCandidate>,
    pub refused: Vec<RefusedServer>,
}

/// The engine as `airlock status` shows it: which process, which version, which data directory.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EngineStatus {
    pub pid: u32,
    pub version: String,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub data_dir: PathBuf,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub workspace: PathBuf,
    pub paused: bool,
    /// Why Airlock can no longer record decisions, if it cannot.
    pub storage_error: Option<String>,
}

/// Shown in Settings, so a person knows which data directory this window owns.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AppInfo {
    pub version: String,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub data_dir: PathBuf,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub workspace: PathBuf,
    pub api_addr: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SettingsView {
    pub app: AppInfo,
    pub workspace_mode: Mode,
    pub provider: Option<ProviderSettings>,
    /// 0 means no timeout (the default).
    pub approval_timeout_secs: u64,
    pub notifications: bool,
    /// Airlock starts at login, hidden in the tray.
    pub start_at_login: bool,
    pub servers: Vec<ServerRow>,
    pub tools: Vec<ToolView>,
    pub rules: Vec<RuleRow>,
    pub remembered: Vec<RememberedRow>,
    /// The provider kinds to choose from (the engine's registry).
    pub provider_kinds: Vec<ProviderKindInfo>,
}

/// A simple switch or number of the Settings screen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "key", content = "value", rename_all = "snake_case")]
pub enum ShellOption {
    ApprovalTimeoutSecs(u64),
    Notifications(bool),
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct RemoteView {
    /// `ADDR:PORT` the phone inbox listens on; null when it is off.
    pub listen: Option<String>,
    pub devices: Vec<DeviceView>,
    /// The ntfy push, null when it is off.
    pub push: Option<NtfyPushView>,
    /// This machine's addresses to suggest (LAN, a VPN's such as Tailscale's): IPv4 first, no
    /// loopback or link-local ones.
    pub addresses: Vec<String>,
}

/// Tells the UI which screen (and item) to show.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Navigate {
    pub screen: String,
    pub approval_id: Option<String>,
}
