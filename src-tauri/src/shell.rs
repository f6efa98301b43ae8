//! What the shell holds for the commands: the in-process engine and where its API listens.

use airlock_engine::Engine;
use serde::Serialize;
use std::net::SocketAddr;
use std::path::PathBuf;
use ts_rs::TS;

#[derive(Debug)]
pub struct Shell {
    pub engine: Engine,
    pub api_addr: SocketAddr,
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
    pub fn info(&self) -> AppInfo {
        AppInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            data_dir: self.engine.data_dir().to_path_buf(),
            workspace: self.engine.workspace().to_path_buf(),
            api_addr: format!("http://{}", self.api_addr),
        }
    }
}
