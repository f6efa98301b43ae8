//! Settings: everything the Settings screen lets a person set.

use super::error::ErrorCode;
use super::{CommandError, CommandResult};
use crate::shell::{AppInfo, Shell};
use airlock_core::{ArgRule, Mode, RuleEffect, RulePattern, Setting, ToolSetting};
use airlock_engine::Engine;
use airlock_engine::{ProviderKindInfo, ProviderSettings, ToolView};
use airlock_protocol::{AddedRule, RememberedRow, RuleRow, ServerRow};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use ts_rs::TS;

#[derive(Debug, Clone, Serialize, TS)]
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
#[derive(Debug, Clone, PartialEq, Deserialize, TS)]
#[serde(tag = "key", content = "value", rename_all = "snake_case")]
pub enum ShellOption {
    ApprovalTimeoutSecs(u64),
    Notifications(bool),
}

/// Whether new requests raise a desktop notification.
pub fn notifications_enabled(engine: &Engine) -> bool {
    !matches!(
        engine.setting(Setting::Notifications),
        Ok(Some(Value::Bool(false)))
    )
}

pub async fn settings(shell: &Shell) -> CommandResult<SettingsView> {
    let engine = &shell.engine;
    Ok(SettingsView {
        app: shell.info(),
        workspace_mode: engine.workspace_mode()?,
        provider: engine.provider_settings()?,
        approval_timeout_secs: engine
            .setting(Setting::ApprovalTimeoutSecs)?
            .and_then(|v| v.as_u64())
            .unwrap_or(0),
        notifications: notifications_enabled(engine),
        start_at_login: shell.login_entry.is_enabled(),
        servers: engine.server_settings()?,
        tools: engine.tool_views()?,
        rules: engine.rules()?,
        remembered: engine.remembered()?,
        provider_kinds: airlock_engine::provider_kinds(),
    })
}

pub async fn set_workspace_mode(shell: &Shell, mode: Mode) -> CommandResult<()> {
    Ok(shell.engine.set_mode(None, Some(mode))?)
}

pub async fn set_provider(shell: &Shell, provider: ProviderSettings) -> CommandResult<()> {
    Ok(shell.engine.set_provider(provider)?)
}

/// Keeps a pasted API key in the OS keyring (never in the store); `name: None` is the default
/// provider.
pub async fn set_provider_key(
    shell: &Shell,
    name: Option<String>,
    key: String,
) -> CommandResult<()> {
    Ok(shell.engine.set_provider_key(name.as_deref(), &key)?)
}

/// "Test connection": one real request; what came back, or why it failed.
pub async fn test_provider(
    shell: &Shell,
    provider: ProviderSettings,
    api_key: Option<String>,
) -> CommandResult<String> {
    Ok(shell
        .engine
        .test_provider(provider, api_key.as_deref())
        .await?)
}

/// The folder Airlock's own tools work in, from the next start on.
pub async fn set_workspace(shell: &Shell, folder: String) -> CommandResult<()> {
    Ok(shell.engine.set_workspace(&folder)?)
}

pub async fn set_tool_setting(
    shell: &Shell,
    server: String,
    tool: String,
    setting: ToolSetting,
) -> CommandResult<()> {
    Ok(shell.engine.set_tool_setting(&server, &tool, setting)?)
}

/// Whether a notification may approve a tool (`tool` given) or a server's tools; `allow: None`
/// forgets the choice.
pub async fn set_from_notification(
    shell: &Shell,
    server: String,
    tool: Option<String>,
    allow: Option<bool>,
) -> CommandResult<()> {
    Ok(shell
        .engine
        .set_from_notification(&server, tool.as_deref(), allow)?)
}

pub async fn add_rule(
    shell: &Shell,
    server: String,
    tool: String,
    pointer: String,
    pattern: RulePattern,
    effect: RuleEffect,
) -> CommandResult<AddedRule> {
    let rule = ArgRule {
        id: Engine::new_rule_id(),
        server,
        tool,
        pointer,
        pattern,
        effect,
    };
    Ok(shell.engine.add_rule(rule)?)
}

/// Every argument rule, oldest first (Insights shows each beside its tool).
pub async fn rules(shell: &Shell) -> CommandResult<Vec<RuleRow>> {
    Ok(shell.engine.rules()?)
}

pub async fn remove_rule(shell: &Shell, id: String) -> CommandResult<()> {
    Ok(shell.engine.remove_rule(&id)?)
}

pub async fn revoke_remembered(shell: &Shell, id: String) -> CommandResult<bool> {
    let revoked = shell.engine.revoke_remembered(&id)?;
    shell.grants_changed.notify_one();
    Ok(revoked)
}

pub async fn set_option(shell: &Shell, option: ShellOption) -> CommandResult<()> {
    let (key, value) = match option {
        ShellOption::ApprovalTimeoutSecs(secs) => (Setting::ApprovalTimeoutSecs, json!(secs)),
        ShellOption::Notifications(on) => (Setting::Notifications, json!(on)),
    };
    shell
        .engine
        .set_setting(key, &value)
        .map_err(CommandError::from)
}

/// Starts Airlock at login (hidden in the tray: the entry passes `--hidden`), or no longer.
/// Returns whether the entry is there now.
pub async fn set_start_at_login(shell: &Shell, enabled: bool) -> CommandResult<bool> {
    shell
        .login_entry
        .set(enabled)
        .map_err(|error| CommandError {
            code: ErrorCode::Internal,
            message: error.to_string(),
        })
}
