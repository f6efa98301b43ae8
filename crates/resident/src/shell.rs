//! What the commands act on: the engine, where its API listens, and the desktop's own state that
//! outlives any window (where a new window should land, the tray's lines, the login entry).

use crate::autostart::LoginEntry;
use crate::window::{Navigation, Windows};
use airlock_engine::Engine;
pub use airlock_protocol::AppInfo;
use std::net::SocketAddr;
use tokio::sync::Notify;

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
}

impl Shell {
    pub fn new(
        engine: Engine,
        api_addr: SocketAddr,
        login_entry: LoginEntry,
        windows: Windows,
    ) -> Self {
        Self {
            engine,
            api_addr,
            navigation: Navigation::default(),
            tray: std::sync::OnceLock::new(),
            grants_changed: Notify::new(),
            login_entry,
            windows,
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
}
