//! What the commands act on: the engine, where its API listens, and the desktop's own state that
//! outlives any window (where a new window should land, the tray's lines, the login entry).
//! The window's and the tray's own modules know nothing of the shell: it puts them together.

use crate::autostart::LoginEntry;
use crate::team_link::{Keyring, TeamLink};
use crate::tray_lines::TrayLine;
use crate::window::{Navigation, WindowMessage, Windows, WindowsView};
use airlock_engine::{Engine, Frontend};
pub use airlock_protocol::AppInfo;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::sync::{Notify, broadcast};

#[derive(Debug)]
pub struct Shell {
    pub engine: Engine,
    pub api_addr: SocketAddr,
    pub navigation: Navigation,
    /// The tray icon, once it is up (Linux: a StatusNotifierItem; elsewhere the platform's tray).
    pub tray: std::sync::OnceLock<crate::tray::Tray>,
    /// Told when grants change without an engine event (a revoke), so the tray reads them again.
    pub grants_changed: Notify,
    pub login_entry: LoginEntry,
    pub windows: Windows,
    /// The person's team server beside this engine (Settings → Team server).
    pub team: Arc<TeamLink>,
}

impl Shell {
    pub fn new(
        engine: Engine,
        api_addr: SocketAddr,
        login_entry: LoginEntry,
        windows: Windows,
    ) -> Self {
        let data_dir = engine.data_dir().to_path_buf();
        let team = Arc::new(TeamLink::open(&data_dir, Box::new(Keyring::new(&data_dir))));
        Self {
            engine,
            api_addr,
            navigation: Navigation::default(),
            tray: std::sync::OnceLock::new(),
            grants_changed: Notify::new(),
            login_entry,
            windows,
            team,
        }
    }

    pub fn info(&self) -> AppInfo {
        AppInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            data_dir: self.engine.data_dir().to_path_buf(),
            workspace: self.engine.workspace().to_path_buf(),
            api_addr: format!("http://{}", self.api_addr),
        }
    }

    pub async fn show_in_tray(&self, line: TrayLine) {
        if let Some(tray) = self.tray.get() {
            tray.show(line).await;
        }
    }

    /// The menu's changing lines as the tray shows them now (count, pause, grants); empty
    /// without a tray.
    pub async fn tray_texts(&self) -> Vec<String> {
        match self.tray.get() {
            Some(tray) => tray.menu_texts().await,
            None => Vec::new(),
        }
    }

    /// Shows the window on the inbox (on its item when given), starting one when none is open.
    pub fn open_inbox(&self, approval_id: Option<String>) {
        self.windows.open_inbox(&self.navigation, approval_id);
    }

    /// The windows as `GET /v1/desktop/windows` shows them.
    pub fn windows_view(&self) -> WindowsView {
        self.windows.view(&self.navigation)
    }

    /// A window connected to the resident; its messages come from the receiver. Keep the
    /// [`Connected`] as long as its event stream lives.
    pub fn connect_window(self: &Arc<Self>) -> (Connected, broadcast::Receiver<WindowMessage>) {
        let messages = self.windows.connected();
        (Connected(self.clone()), messages)
    }
}

/// An open window; dropped when its event stream ends (the window closed).
#[derive(Debug)]
pub struct Connected(Arc<Shell>);

impl Drop for Connected {
    fn drop(&mut self) {
        self.0.windows.disconnected(&self.0.navigation);
    }
}

/// The app's window as the engine sees it.
pub struct WindowFrontend(pub Arc<Shell>);

impl Frontend for WindowFrontend {
    fn show(&self, approval_id: Option<String>) {
        match approval_id {
            Some(id) => self.0.open_inbox(Some(id)),
            None => self.0.windows.open(&self.0.navigation, None),
        }
    }
}
