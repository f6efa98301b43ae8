//! Chat: sessions, their messages (with the tool calls inside), sending, cancelling, the mode.

use super::CommandResult;
use crate::shell::{AppInfo, Shell};
use airlock_core::Mode;
use airlock_protocol::{MessageRow, SessionRow};

pub async fn app_info(shell: &Shell) -> CommandResult<AppInfo> {
    Ok(shell.info())
}

pub async fn list_sessions(shell: &Shell) -> CommandResult<Vec<SessionRow>> {
    Ok(shell.engine.sessions()?)
}

pub async fn transcript(shell: &Shell, session: String) -> CommandResult<Vec<MessageRow>> {
    Ok(shell.engine.transcript(&session)?)
}

/// Starts a turn and returns at once; progress arrives as engine events.
pub async fn send_message(
    shell: &Shell,
    session: String,
    text: String,
) -> CommandResult<SessionRow> {
    Ok(shell.engine.send_message(&session, &text)?)
}

pub async fn cancel_turn(shell: &Shell, session: String) -> CommandResult<bool> {
    Ok(shell.engine.cancel(&session)?)
}

/// Whether the agents are paused ("Pause all agents" in the tray, the window or `airlock pause`).
pub async fn paused(shell: &Shell) -> CommandResult<bool> {
    Ok(shell.engine.paused())
}

/// Why Airlock can no longer record decisions, when the disk refused a write.
pub async fn storage_failure(shell: &Shell) -> CommandResult<Option<String>> {
    Ok(shell.engine.storage_failure())
}

/// The tray menu's changing lines as shown now ("N pending", "Pause all agents"); empty when
/// the desktop has no tray.
pub async fn tray_menu(shell: &Shell) -> CommandResult<Vec<String>> {
    Ok(shell.tray_texts().await)
}

/// What the window should show first: called by the page once it listens for `navigate`, so a
/// window created to open an item (from the tray, a notification, `airlock open`) lands on it.
pub async fn take_navigation(shell: &Shell) -> CommandResult<Option<crate::window::Navigate>> {
    Ok(shell.navigation.take())
}

/// Pauses or resumes every agent; the engine announces the change to every channel.
pub async fn set_paused(shell: &Shell, paused: bool) -> CommandResult<()> {
    shell.engine.set_paused(paused)?;
    Ok(())
}

/// `mode: null` clears the session's override, so the workspace default applies again.
pub async fn set_session_mode(
    shell: &Shell,
    session: String,
    mode: Option<Mode>,
) -> CommandResult<SessionRow> {
    shell.engine.set_mode(Some(&session), mode)?;
    Ok(shell.engine.session(&session)?)
}
