//! The tray icon: "N pending" (with a badged icon), Open inbox, Pause all agents, Quit.

use crate::pending::pending_label;
use crate::shell::Shell;
use crate::window;
use airlock_core::SessionStatus;
use tauri::image::Image;
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Runtime};

const TRAY_ID: &str = "airlock";
const ICON: &[u8] = include_bytes!("../icons/tray.png");
const ICON_BADGED: &[u8] = include_bytes!("../icons/tray-badge.png");

/// The menu line that shows the count, kept to change its text.
struct CountItem<R: Runtime>(MenuItem<R>);

pub fn install<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let count = MenuItem::with_id(app, "count", pending_label(0), false, None::<&str>)?;
    let open = MenuItem::with_id(app, "open", "Open inbox", true, None::<&str>)?;
    let pause = MenuItem::with_id(app, "pause", "Pause all agents", true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Airlock", true, None::<&str>)?;
    let separator = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(app, &[&count, &separator, &open, &pause, &quit])?;
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(Image::from_bytes(ICON)?)
        .tooltip("Airlock")
        .menu(&menu)
        .on_menu_event(|app, event| match event.id().as_ref() {
            "open" => window::open_inbox(app, None),
            "pause" => pause_all(app),
            "quit" => app.exit(0),
            _ => {}
        })
        .build(app)?;
    app.manage(CountItem(count));
    Ok(())
}

/// Shows the count in the menu, the tooltip and the icon's badge.
pub fn show_count<R: Runtime>(app: &AppHandle<R>, count: usize) {
    let label = pending_label(count);
    if let Some(item) = app.try_state::<CountItem<R>>() {
        let _ = item.0.set_text(&label);
    }
    if let Some(tray) = app.tray_by_id(TRAY_ID) {
        let _ = tray.set_tooltip(Some(format!("Airlock — {label}")));
        if let Ok(icon) = Image::from_bytes(if count > 0 { ICON_BADGED } else { ICON }) {
            let _ = tray.set_icon(Some(icon));
        }
    }
}

/// Cancels every running turn: pending calls are cancelled and nothing more runs.
fn pause_all<R: Runtime>(app: &AppHandle<R>) {
    let Some(shell) = app.try_state::<Shell>() else { return };
    let Ok(sessions) = shell.engine.sessions() else { return };
    for session in sessions.iter().filter(|s| !matches!(s.status, SessionStatus::Idle | SessionStatus::Failed)) {
        if let Err(error) = shell.engine.cancel(&session.name) {
            tracing::warn!("cannot pause session {}: {error}", session.name);
        }
    }
}
