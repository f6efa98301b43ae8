//! Chat: sessions, their messages (with the tool calls inside), sending, cancelling, the mode.

use super::CommandResult;
use crate::shell::{AppInfo, Shell};
use airlock_core::Mode;
use airlock_protocol::{MessageRow, SessionRow};
use tauri::State;

#[tauri::command]
pub async fn app_info(shell: State<'_, Shell>) -> CommandResult<AppInfo> {
    Ok(shell.info())
}

#[tauri::command]
pub async fn list_sessions(shell: State<'_, Shell>) -> CommandResult<Vec<SessionRow>> {
    Ok(shell.engine.sessions()?)
}

#[tauri::command]
pub async fn transcript(
    shell: State<'_, Shell>,
    session: String,
) -> CommandResult<Vec<MessageRow>> {
    Ok(shell.engine.transcript(&session)?)
}

/// Starts a turn and returns at once; progress arrives as engine events.
#[tauri::command]
pub async fn send_message(
    shell: State<'_, Shell>,
    session: String,
    text: String,
) -> CommandResult<SessionRow> {
    Ok(shell.engine.send_message(&session, &text)?)
}

#[tauri::command]
pub async fn cancel_turn(shell: State<'_, Shell>, session: String) -> CommandResult<bool> {
    Ok(shell.engine.cancel(&session)?)
}

/// Whether the agents are paused ("Pause all agents" in the tray, the window or `airlock pause`).
#[tauri::command]
pub async fn paused(shell: State<'_, Shell>) -> CommandResult<bool> {
    Ok(shell.engine.paused())
}

/// Why Airlock can no longer record decisions, when the disk refused a write.
#[tauri::command]
pub async fn storage_failure(shell: State<'_, Shell>) -> CommandResult<Option<String>> {
    Ok(shell.engine.storage_failure())
}

/// The tray menu's changing lines as shown now ("N pending", "Pause all agents"); empty when
/// the desktop has no tray.
#[tauri::command]
pub async fn tray_menu(app: tauri::AppHandle) -> CommandResult<Vec<String>> {
    Ok(crate::tray::menu_texts(&app))
}

/// What the window should show first: called by the page once it listens for `navigate`, so a
/// window created to open an item (from the tray, a notification, `airlock open`) lands on it.
#[tauri::command]
pub async fn take_navigation(
    navigation: State<'_, crate::window::Navigation>,
) -> CommandResult<Option<crate::window::Navigate>> {
    Ok(navigation.take())
}

/// Pauses or resumes every agent; the engine announces the change to every channel.
#[tauri::command]
pub async fn set_paused(shell: State<'_, Shell>, paused: bool) -> CommandResult<()> {
    shell.engine.set_paused(paused)?;
    Ok(())
}

/// `mode: null` clears the session's override, so the workspace default applies again.
#[tauri::command]
pub async fn set_session_mode(
    shell: State<'_, Shell>,
    session: String,
    mode: Option<Mode>,
) -> CommandResult<SessionRow> {
    shell.engine.set_mode(Some(&session), mode)?;
    Ok(shell.engine.session(&session)?)
}
