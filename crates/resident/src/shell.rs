//! What the commands act on: the engine, where its API listens, and the desktop's own state that
//! outlives any window (where a new window should land, the tray's lines, the login entry).

use crate::autostart::LoginEntry;
use crate::window::{Navigation, Windows};
use airlock_engine::Engine;
use serde::Serialize;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Mutex;
use tokio::sync::Notify;
use ts_rs::TS;

#[derive(Debug)]
pub struct Shell {
    pub engine: Engine,
    pub api_addr: SocketAddr,
    pub navigation: Navigation,
    /// The tray menu's changing lines as shown now (kept by whoever draws the tray).
    pub tray_texts: Mutex<Vec<String>>,
    /// Told when grants change without an engine event (a revoke), so the tray reads them again.
    pub grants_changed: Notify,
    pub login_entry: LoginEntry,
    pub windows: Windows,
}

/// Shown in Settings, so a person knows which data directory this window owns.
#[derive(Debug, Clone, Serialize, TS)]
pub struct AppInfo {
    pub version: String,
    #[ts(type = "string")]
    pub data_dir: PathBuf,
    #[ts(type = "string")]
    pub workspace: PathBuf,
    pub api_addr: String,
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
            tray_texts: Mutex::new(Vec::new()),
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

    pub fn tray_texts(&self) -> Vec<String> {
        self.tray_texts
            .lock()
            .map(|texts| texts.clone())
            .unwrap_or_default()
    }

    pub fn set_tray_texts(&self, texts: Vec<String>) {
        if let Ok(mut shown) = self.tray_texts.lock() {
            *shown = texts;
        }
    }
}
