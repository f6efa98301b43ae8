//! Settings: everything the Settings screen lets a person set.

use super::error::ErrorCode;
use super::{CommandError, CommandResult};
use crate::shell::{AppInfo, Shell};
use airlock_core::{ArgRule, Mode, RuleEffect, RulePattern, Setting, ToolSetting};
use airlock_engine::Engine;
use airlock_engine::{ProviderKindInfo, ProviderSettings, ToolView};
use airlock_protocol::{RememberedRow, RuleRow, ServerRow};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tauri::{AppHandle, Manager, Runtime, State};
use tauri_plugin_autostart::ManagerExt;
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

/// Whether the login entry (written by tauri-plugin-autostart: an XDG autostart file, a macOS
/// launch agent, the Windows Run key) is there; false where the plugin is not installed.
pub fn start_at_login<R: Runtime>(app: &AppHandle<R>) -> bool {
    app.try_state::<tauri_plugin_autostart::AutoLaunchManager>()
        .is_some_and(|manager| manager.is_enabled().unwrap_or(false))
}

#[tauri::command]
pub async fn settings(app: AppHandle, shell: State<'_, Shell>) -> CommandResult<SettingsView> {
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
        start_at_login: start_at_login(&app),
        servers: engine.server_settings()?,
        tools: engine.tool_views()?,
        rules: engine.rules()?,
        remembered: engine.remembered()?,
        provider_kinds: airlock_engine::provider_kinds(),
    })
}

#[tauri::command]
pub async fn set_workspace_mode(shell: State<'_, Shell>, mode: Mode) -> CommandResult<()> {
    Ok(shell.engine.set_mode(None, Some(mode))?)
}

#[tauri::command]
pub async fn set_provider(
    shell: State<'_, Shell>,
    provider: ProviderSettings,
) -> CommandResult<()> {
    Ok(shell.engine.set_provider(provider)?)
}

#[tauri::command]
pub async fn set_tool_setting(
    shell: State<'_, Shell>,
    server: String,
    tool: String,
    setting: ToolSetting,
) -> CommandResult<()> {
    Ok(shell.engine.set_tool_setting(&server, &tool, setting)?)
}

/// Whether a notification may approve a tool (`tool` given) or a server's tools; `allow: None`
/// forgets the choice.
#[tauri::command]
pub async fn set_from_notification(
    shell: State<'_, Shell>,
    server: String,
    tool: Option<String>,
    allow: Option<bool>,
) -> CommandResult<()> {
    Ok(shell
        .engine
        .set_from_notification(&server, tool.as_deref(), allow)?)
}

#[tauri::command]
pub async fn add_rule(
    shell: State<'_, Shell>,
    server: String,
    tool: String,
    pointer: String,
    pattern: RulePattern,
    effect: RuleEffect,
) -> CommandResult<ArgRule> {
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

#[tauri::command]
pub async fn revoke_remembered(
    app: tauri::AppHandle,
    shell: State<'_, Shell>,
    id: String,
) -> CommandResult<bool> {
    let revoked = shell.engine.revoke_remembered(&id)?;
    crate::events::show_grants(&app, &shell.engine);
    Ok(revoked)
}

#[tauri::command]
pub async fn set_option(shell: State<'_, Shell>, option: ShellOption) -> CommandResult<()> {
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
#[tauri::command]
pub async fn set_start_at_login(app: AppHandle, enabled: bool) -> CommandResult<bool> {
    let manager = app.autolaunch();
    let done = if enabled {
        manager.enable()
    } else {
        manager.disable()
    };
    done.map_err(|error| CommandError {
        code: ErrorCode::Internal,
        message: format!("could not change the login entry: {error}"),
    })?;
    Ok(start_at_login(&app))
}
