//! The main window. Closing it destroys it, web view and all (its WebKitWebProcess exits; on
//! Linux Tauri keeps WebKitNetworkProcess for the app's life), while
//! Airlock keeps running in the tray; every way of opening it (the tray, a notification, a second
//! launch or `airlock open` through the engine's [`Frontend`], the macOS Dock) creates it again
//! from the configuration when it is gone, and can point the UI at one inbox item.

use airlock_engine::Frontend;
use serde::Serialize;
use std::sync::Mutex;
use tauri::{AppHandle, Emitter, Manager, Runtime, WebviewWindowBuilder};
use ts_rs::TS;

/// Tells the UI which screen (and item) to show.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
pub struct Navigate {
    pub screen: String,
    pub approval_id: Option<String>,
}

pub const NAVIGATE_EVENT: &str = "navigate";
pub const MAIN: &str = "main";

/// Where the UI should go, for a window whose page has not started yet (it would miss the
/// `navigate` event): the page takes it at start ([`Navigation::take`]).
#[derive(Debug, Default)]
pub struct Navigation(Mutex<NavigationState>);

#[derive(Debug, Default)]
struct NavigationState {
    /// The page of the current window has started and listens for `navigate`.
    ready: bool,
    pending: Option<Navigate>,
}

impl Navigation {
    /// A new window's page has not started yet.
    pub fn window_created(&self) {
        if let Ok(mut state) = self.0.lock() {
            state.ready = false;
        }
    }

    /// Either keeps `navigate` for the page to take at start (`Some` is returned to emit now
    /// when the page already listens).
    pub fn offer(&self, navigate: Navigate) -> Option<Navigate> {
        let mut state = self.0.lock().ok()?;
        if state.ready {
            Some(navigate)
        } else {
            state.pending = Some(navigate);
            None
        }
    }

    /// The page has started (it listens for `navigate` from now on): what it should show.
    pub fn take(&self) -> Option<Navigate> {
        let mut state = self.0.lock().ok()?;
        state.ready = true;
        state.pending.take()
    }
}

/// Shows, unminimizes and focuses the main window, creating it when it was closed.
pub fn show<R: Runtime>(app: &AppHandle<R>) {
    if let Some(window) = app.get_webview_window(MAIN) {
        let _ = window.show();
        let _ = window.unminimize();
        let _ = window.set_focus();
        return;
    }
    let Some(config) = app.config().app.windows.iter().find(|w| w.label == MAIN) else {
        tracing::error!("no window `{MAIN}` in the configuration");
        return;
    };
    if let Some(navigation) = app.try_state::<Navigation>() {
        navigation.window_created();
    }
    match WebviewWindowBuilder::from_config(app, config).and_then(|builder| builder.build()) {
        Ok(window) => {
            let _ = window.set_focus();
        }
        Err(error) => tracing::error!("could not open the window: {error}"),
    }
}

/// Shows the window (creating it if needed) on a screen, and item.
pub fn navigate<R: Runtime>(app: &AppHandle<R>, navigate: Navigate) {
    show(app);
    let now = match app.try_state::<Navigation>() {
        Some(navigation) => navigation.offer(navigate),
        None => Some(navigate),
    };
    if let Some(navigate) = now {
        let _ = app.emit(NAVIGATE_EVENT, navigate);
    }
}

pub fn open_inbox<R: Runtime>(app: &AppHandle<R>, approval_id: Option<String>) {
    navigate(
        app,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn inbox(id: &str) -> Navigate {
        Navigate {
            screen: "inbox".into(),
            approval_id: Some(id.into()),
        }
    }

    #[test]
    fn a_new_window_takes_the_last_navigation_at_start() {
        let navigation = Navigation::default();
        navigation.window_created();
        assert_eq!(navigation.offer(inbox("a")), None);
        assert_eq!(navigation.offer(inbox("b")), None);
        assert_eq!(navigation.take(), Some(inbox("b")));
        // Once the page listens, navigation goes out as an event and nothing is kept.
        assert_eq!(navigation.offer(inbox("c")), Some(inbox("c")));
        assert_eq!(navigation.take(), None);
    }

    #[test]
    fn a_closed_and_recreated_window_waits_again() {
        let navigation = Navigation::default();
        assert_eq!(navigation.take(), None);
        navigation.window_created();
        assert_eq!(navigation.offer(inbox("a")), None);
        assert_eq!(navigation.take(), Some(inbox("a")));
    }
}
