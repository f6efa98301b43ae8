//! How a client finds the engine that owns a data directory: `api.json` (address and pid) and
//! `token` (owner-only), both in the data directory, and `engine.lock`, held while it runs.

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum DiscoveryError {
    #[error(
        "another Airlock engine already owns {0} (its lock file is held); use it, or stop it first"
    )]
    Locked(PathBuf),
    #[error(
        "no Airlock engine is running for {0}; start one with `airlock serve` (or open the app)"
    )]
    NotRunning(PathBuf),
    #[error("cannot use {path}: {message}")]
    Io { path: PathBuf, message: String },
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> DiscoveryError + '_ {
    move |e| DiscoveryError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    }
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Endpoint {
    pub addr: SocketAddr,
    pub pid: u32,
}

pub fn token_path(data_dir: &Path) -> PathBuf {
    data_dir.join("token")
}

pub fn endpoint_path(data_dir: &Path) -> PathBuf {
    data_dir.join("api.json")
}

/// Held for the life of the engine process; the OS releases it when the process dies, even by
/// `kill -9`, so a crashed engine never blocks the next one.
#[derive(Debug)]
pub struct EngineLock {
    _file: File,
}

impl EngineLock {
    pub fn acquire(data_dir: &Path) -> Result<Self, DiscoveryError> {
        std::fs::create_dir_all(data_dir).map_err(io(data_dir))?;
        let path = data_dir.join("engine.lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io(&path))?;
        match file.try_lock() {
            Ok(()) => Ok(Self { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) => {
                Err(DiscoveryError::Locked(data_dir.to_path_buf()))
            }
            Err(std::fs::TryLockError::Error(e)) => Err(io(&path)(e)),
        }
    }
}

/// The bearer token, created on first use with owner-only permissions.
pub fn load_or_create_token(data_dir: &Path) -> Result<String, DiscoveryError> {
    let path = token_path(data_dir);
    if let Ok(existing) = std::fs::read_to_string(&path) {
        let token = existing.trim().to_string();
        if token.len() >= 32 {
            restrict(&path)?;
            return Ok(token);
        }
    }
    let token = format!(
        "{:032x}{:032x}",
        rand::random::<u128>(),
        rand::random::<u128>()
    );
    let mut options = File::options();
    options.create(true).write(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&path).map_err(io(&path))?;
    file.write_all(token.as_bytes()).map_err(io(&path))?;
    restrict(&path)?;
    Ok(token)
}

fn restrict(path: &Path) -> Result<(), DiscoveryError> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(io(path))?;
    }
    // Windows has no mode bits: the file keeps its folder's ACL (docs/PLATFORMS.md).
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

pub fn write_endpoint(data_dir: &Path, endpoint: &Endpoint) -> Result<(), DiscoveryError> {
    let path = endpoint_path(data_dir);
    let temp = data_dir.join("api.json.tmp");
    let text = serde_json::to_string(endpoint).unwrap_or_default();
    std::fs::write(&temp, text).map_err(io(&temp))?;
    std::fs::rename(&temp, &path).map_err(io(&path))
}

pub fn remove_endpoint(data_dir: &Path) {
    let _ = std::fs::remove_file(endpoint_path(data_dir));
}

/// The running engine's address and token, or a clear "not running".
pub fn find(data_dir: &Path) -> Result<(Endpoint, String), DiscoveryError> {
    let not_running = || DiscoveryError::NotRunning(data_dir.to_path_buf());
    let text = std::fs::read_to_string(endpoint_path(data_dir)).map_err(|_| not_running())?;
    let endpoint: Endpoint = serde_json::from_str(&text).map_err(|_| not_running())?;
    let token = std::fs::read_to_string(token_path(data_dir)).map_err(|_| not_running())?;
    Ok((endpoint, token.trim().to_string()))
}
