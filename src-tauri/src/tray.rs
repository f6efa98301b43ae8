//! The tray icon: "N pending" (with a badged icon), "N grants active", Open inbox, Pause all
//! agents, Quit.

use crate::pending::pending_label;
use crate::shell::Shell;
use crate::window;
use tauri::image::Image;
use tauri::menu::{Menu, MenuItem, PredefinedMenuItem};
use tauri::tray::TrayIconBuilder;
use tauri::{AppHandle, Manager, Runtime};

const TRAY_ID: &str = "airlock";
const ICON: &[u8] = include_bytes!("../icons/tray.png");
const ICON_BADGED: &[u8] = include_bytes!("../icons/tray-badge.png");

/// The menu lines whose text changes: the count, and Pause / Resume.
struct TrayItems<R: Runtime> {
    count: MenuItem<R>,
    pause: MenuItem<R>,
    grants: MenuItem<R>,
}

/// The grants line: how many timed or counted grants let calls run without asking now.
pub fn grants_label(active: usize) -> String {
    match active {
        0 => "No grants active".into(),
        1 => "1 grant active".into(),
        n => format!("{n} grants active"),
    }
}

/// The pause line's text: it says what clicking it does.
pub fn pause_label(paused: bool) -> &'static str {
    if paused {
        "Resume agents"
    } else {
        "Pause all agents"
    }
}

pub fn install<R: Runtime>(app: &AppHandle<R>) -> tauri::Result<()> {
    let count = MenuItem::with_id(app, "count", pending_label(0), false, None::<&str>)?;
    let open = MenuItem::with_id(app, "open", "Open inbox", true, None::<&str>)?;
    let paused = app
        .try_state::<Shell>()
        .is_some_and(|shell| shell.engine.paused());
    let pause = MenuItem::with_id(app, "pause", pause_label(paused), true, None::<&str>)?;
    let quit = MenuItem::with_id(app, "quit", "Quit Airlock", true, None::<&str>)?;
    // Information, like the count: Settings lists each grant with what is left, revocable.
    let grants = MenuItem::with_id(app, "grants", grants_label(0), false, None::<&str>)?;
    let separator = PredefinedMenuItem::separator(app)?;
    let menu = Menu::with_items(app, &[&count, &grants, &separator, &open, &pause, &quit])?;
    TrayIconBuilder::with_id(TRAY_ID)
        .icon(Image::from_bytes(ICON)?)
        .tooltip("Airlock")
        .menu(&menu)
        .on_menu_event(|app, event| match event.id().as_ref() {
            "open" => window::open_inbox(app, None),
            "pause" => toggle_pause(app),
            "quit" => app.exit(0),
            _ => {}
        })
        .build(app)?;
    app.manage(TrayItems {
        count,
        pause,
        grants,
    });
    Ok(())
}

/// Shows the count in the menu, the tooltip and the icon's badge.
pub fn show_count<R: Runtime>(app: &AppHandle<R>, count: usize) {
    let label = pending_label(count);
    if let Some(items) = app.try_state::<TrayItems<R>>() {
        let _ = items.count.set_text(&label);
    }
    if let Some(tray) = app.tray_by_id(TRAY_ID) {
        let _ = tray.set_tooltip(Some(format!("Airlock — {label}")));
        if let Ok(icon) = Image::from_bytes(if count > 0 { ICON_BADGED } else { ICON }) {
            let _ = tray.set_icon(Some(icon));
        }
    }
}

/// The texts of the menu's changing lines as the tray shows them now (count, pause, grants): read back
/// from the live menu items, so a test of the real app can assert what the person sees.
pub fn menu_texts<R: Runtime>(app: &AppHandle<R>) -> Vec<String> {
    app.try_state::<TrayItems<R>>()
        .map(|items| {
            [&items.count, &items.pause, &items.grants]
                .iter()
                .filter_map(|item| item.text().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// The disk refused to record a decision: the menu and the tooltip say so instead of a count.
pub fn show_storage_failure<R: Runtime>(app: &AppHandle<R>) {
    let label = "Cannot record decisions — restart Airlock";
    if let Some(items) = app.try_state::<TrayItems<R>>() {
        let _ = items.count.set_text(label);
    }
    if let Some(tray) = app.tray_by_id(TRAY_ID) {
        let _ = tray.set_tooltip(Some(format!("Airlock — {label}")));
    }
}

/// Shows how many grants are active (read from the engine: a grant also ends by its time).
pub fn show_grants<R: Runtime>(app: &AppHandle<R>, active: usize) {
    if let Some(items) = app.try_state::<TrayItems<R>>() {
        let _ = items.grants.set_text(grants_label(active));
    }
}

/// Shows whether the agents are paused (switched from here, the UI or `airlock pause`).
pub fn show_paused<R: Runtime>(app: &AppHandle<R>, paused: bool) {
    if let Some(items) = app.try_state::<TrayItems<R>>() {
        let _ = items.pause.set_text(pause_label(paused));
    }
}

/// Pauses every agent, or resumes them; the engine announces it, which updates this menu.
fn toggle_pause<R: Runtime>(app: &AppHandle<R>) {
    let Some(shell) = app.try_state::<Shell>() else {
        return;
    };
    if let Err(error) = shell.engine.set_paused(!shell.engine.paused()) {
        tracing::warn!("cannot switch the pause: {error}");
    }
}

#[cfg(test)]
mod tests {
    use super::{grants_label, pause_label};

    #[test]
    fn the_grants_line_counts_active_grants() {
        assert_eq!(grants_label(0), "No grants active");
        assert_eq!(grants_label(1), "1 grant active");
        assert_eq!(grants_label(2), "2 grants active");
    }

    #[test]
    fn the_pause_line_says_what_a_click_does() {
        assert_eq!(pause_label(false), "Pause all agents");
        assert_eq!(pause_label(true), "Resume agents");
    }
}
