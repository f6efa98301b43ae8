//! The window as the resident process sees it: a separate process (`airlock-desktop --window`)
//! that connects to [`crate::desktop_api`]'s event stream while it is open. Every way of opening
//! it (the tray, a notification, a second launch or `airlock open` through the engine's
//! [`Frontend`]) comes here: a window that is open is shown and told where to go; when none is,
//! one is started, and the page takes where to go once it has started ([`Navigation::take`]).

use serde::Serialize;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::broadcast;

pub use airlock_protocol::Navigate;

/// Where the UI should go, for a window whose page has not started yet (it would miss the
/// `navigate` event): the page takes it at start ([`Navigation::take`]).
#[derive(Debug, Default)]
pub struct Navigation(Mutex<NavigationState>);

#[derive(Debug, Default)]
struct NavigationState {
    /// The page of the current window has started and listens for `navigate`.
    ready: bool,
    pending: Option<Navigate>,
    /// How many pages have started (one per window opened), and where the last went.
    started: u64,
    landed: Option<Navigate>,
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
            state.landed = Some(navigate.clone());
            Some(navigate)
        } else {
            state.pending = Some(navigate);
            None
        }
    }

    /// How many pages have started, whether the current one listens, and where the last went.
    fn pages(&self) -> (u64, bool, Option<Navigate>) {
        self.0
            .lock()
            .map(|state| (state.started, state.ready, state.landed.clone()))
            .unwrap_or_default()
    }

    /// The page has started (it listens for `navigate` from now on): what it should show.
    pub fn take(&self) -> Option<Navigate> {
        let mut state = self.0.lock().ok()?;
        state.ready = true;
        state.started += 1;
        let pending = state.pending.take();
        if pending.is_some() {
            state.landed = pending.clone();
        }
        pending
    }
}

/// The window as the resident knows it (`GET /v1/desktop/windows`): whether one is open, how
/// many window processes it started and how many pages have started, and where the last
/// navigation took it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WindowsView {
    pub open: usize,
    pub windows_started: u64,
    pub pages_started: u64,
    pub page_ready: bool,
    pub landed: Option<Navigate>,
}

/// What the resident tells an open window (the names are the UI's event names).
#[derive(Debug, Clone, PartialEq)]
pub enum WindowMessage {
    /// Come to the front.
    Show,
    Navigate(Navigate),
    /// Airlock quits: close.
    Quit,
}

/// A window that was started but has not connected yet is not started again for this long.
const START_GRACE: Duration = Duration::from_secs(20);

/// The open windows (normally one) and how to start one.
#[derive(Debug)]
pub struct Windows {
    messages: broadcast::Sender<WindowMessage>,
    connected: AtomicUsize,
    /// How many window processes were started.
    started: AtomicU64,
    started_at: Mutex<Option<Instant>>,
    /// `airlock-desktop` and its arguments for a window of this data directory; none where no
    /// window can be started (tests of the resident alone).
    command: Option<(PathBuf, Vec<String>)>,
}

impl Windows {
    pub fn new(command: Option<(PathBuf, Vec<String>)>) -> Self {
        Self {
            messages: broadcast::channel(16).0,
            connected: AtomicUsize::new(0),
            started: AtomicU64::new(0),
            started_at: Mutex::new(None),
            command,
        }
    }

    pub fn open_count(&self) -> usize {
        self.connected.load(Ordering::SeqCst)
    }

    /// Shows the window (starting one when none is open), on `navigate` when given.
    pub fn open(&self, navigation: &Navigation, navigate: Option<Navigate>) {
        if self.open_count() > 0 {
            let _ = self.messages.send(WindowMessage::Show);
            if let Some(now) = navigate.and_then(|n| navigation.offer(n)) {
                let _ = self.messages.send(WindowMessage::Navigate(now));
            }
            return;
        }
        navigation.window_created();
        if let Some(navigate) = navigate {
            let _ = navigation.offer(navigate);
        }
        self.start();
    }

    /// Shows the window on the inbox (on its item when given).
    pub fn open_inbox(&self, navigation: &Navigation, approval_id: Option<String>) {
        self.open(
            navigation,
            Some(Navigate {
                screen: "inbox".into(),
                approval_id,
            }),
        );
    }

    /// The windows as `GET /v1/desktop/windows` shows them.
    pub fn view(&self, navigation: &Navigation) -> WindowsView {
        let (pages_started, page_ready, landed) = navigation.pages();
        WindowsView {
            open: self.open_count(),
            windows_started: self.started.load(Ordering::SeqCst),
            pages_started,
            page_ready,
            landed,
        }
    }

    /// A window connected (its event stream opened): its messages from now on. Not a new page:
    /// the page may have taken its navigation before its process connected (the resident
    /// marks a page as not started when it starts a window or one goes).
    pub fn connected(&self) -> broadcast::Receiver<WindowMessage> {
        self.connected.fetch_add(1, Ordering::SeqCst);
        if let Ok(mut started) = self.started_at.lock() {
            *started = None;
        }
        self.messages.subscribe()
    }

    /// A window's event stream ended (it closed): the next page is a new one.
    pub fn disconnected(&self, navigation: &Navigation) {
        self.connected.fetch_sub(1, Ordering::SeqCst);
        navigation.window_created();
    }

    /// Tells every open window to close (Quit).
    pub fn close_all(&self) {
        let _ = self.messages.send(WindowMessage::Quit);
    }

    fn start(&self) {
        let Ok(mut started) = self.started_at.lock() else {
            return;
        };
        if started.is_some_and(|at| at.elapsed() < START_GRACE) {
            return;
        }
        let Some((program, args)) = &self.command else {
            tracing::warn!("no window can be started here");
            return;
        };
        let mut command = tokio::process::Command::new(program);
        command.args(args).stdin(std::process::Stdio::null());
        match command.spawn() {
            Ok(mut child) => {
                *started = Some(Instant::now());
                self.started.fetch_add(1, Ordering::SeqCst);
                // Reaps the window process when it exits (closed), so it leaves no zombie.
                tokio::spawn(async move {
                    let _ = child.wait().await;
                });
            }
            Err(error) => tracing::error!(
                "could not start the window ({}): {error}",
                program.display()
            ),
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
