//! The main window: closing it hides it (Airlock keeps running in the tray); opening it can
//! point the UI at one inbox item. A second launch or `airlock open` reaches it through the
//! engine's [`Frontend`].

use airlock_engine::Frontend;
use serde::Serialize;
use tauri::{AppHandle, Emitter, Manager, Runtime};
use ts_rs::TS;

/// Tells the UI which screen (and item) to show.
#[derive(Debug, Clone, Serialize, TS)]
pub struct Navigate {
    pub screen: String,
    pub approval_id: Option<String>,
}

pub const NAVIGATE_EVENT: &str = "navigate";

/// Shows, unminimizes and focuses the main window.
pub fn show<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
}

pub fn open_inbox<R: Runtime>(app: &AppHandle<R>, approval_id: Option<String>) {
    show(app);
    let _ = app.emit(
        NAVIGATE_EVENT,
        Navigate {
            screen: "inbox".into(),
            approval_id,
        },
    );
}

/// The app's window as the engine sees it.
pub struct WindowFrontend<R: Runtime>(pub AppHandle<R>);

impl<R: Runtime> Frontend for WindowFrontend<R> {
    fn show(&self, approval_id: Option<String>) {
        match approval_id {
            Some(id) => open_inbox(&self.0, Some(id)),
            None => show(&self.0),
        }
    }
}
