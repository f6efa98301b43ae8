//! The main window: closing it hides it (Airlock keeps running in the tray); opening it can
//! point the UI at one inbox item.

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

pub fn open_inbox<R: Runtime>(app: &AppHandle<R>, approval_id: Option<String>) {
    if let Some(window) = app.get_webview_window("main") {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
    }
    let _ = app.emit(NAVIGATE_EVENT, Navigate { screen: "inbox".into(), approval_id });
}
