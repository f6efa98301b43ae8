//! How a client finds the engine that owns a data directory, and knows it is that engine before
//! it sends anything: `engine.lock` (held while the engine runs), `api.json` (its pid, its
//! loopback address and, on Unix, its socket `api.sock`) and `token` (rotated at every start).
//! All of them are in the data directory, which only its owner may enter (0700), and the files
//! are owner-only (0600).
//!
//! After a crash `api.json` stays behind and another process may listen on the port it names:
//! a client checks first that the lock is held and the pid it records is alive, so a stale file
//! is "not running", never an address to send the token to. On Unix clients do not use that
//! port at all: the socket lies inside the private data directory.

use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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

/// What `api.json` says: where the engine listens and which process it is.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Endpoint {
    /// The loopback TCP address (the window, Windows, and other HTTP clients).
    pub addr: SocketAddr,
    pub pid: u32,
    /// The Unix socket clients on Unix use (`api.sock` in the data directory, written as an
    /// absolute path); none where it could not be bound (Windows, a data directory whose path
    /// is too long for a socket).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub socket: Option<PathBuf>,
}

pub fn token_path(data_dir: &Path) -> PathBuf {
    data_dir.join("token")
}

pub fn endpoint_path(data_dir: &Path) -> PathBuf {
    data_dir.join("api.json")
}

/// Where the engine's Unix socket is bound.
pub fn socket_path(data_dir: &Path) -> PathBuf {
    data_dir.join("api.sock")
}

fn lock_path(data_dir: &Path) -> PathBuf {
    data_dir.join("engine.lock")
}

/// How long the engine waits for its lock while a client looks at it: a client's check holds a
/// shared lock for a moment, and an engine starting in that moment must not take it for
/// another engine.
const LOCK_PATIENCE: Duration = Duration::from_millis(250);

/// Held for the life of the engine process; the OS releases it when the process dies, even by
/// `kill -9`, so a crashed engine never blocks the next one.
#[derive(Debug)]
pub struct EngineLock {
    _file: File,
}

impl EngineLock {
    pub fn acquire(data_dir: &Path) -> Result<Self, DiscoveryError> {
        std::fs::create_dir_all(data_dir).map_err(io(data_dir))?;
        let path = lock_path(data_dir);
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .map_err(io(&path))?;
        let started = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => {
                    // What a killed engine of this directory left behind (`api.json`, the
                    // socket) goes now: from here until [`publish`], clients find "not
                    // running" rather than an address that may be anyone's by now.
                    remove_endpoint(data_dir);
                    return Ok(Self { _file: file });
                }
                Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < LOCK_PATIENCE => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(DiscoveryError::Locked(data_dir.to_path_buf()));
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io(&path)(e)),
            }
        }
    }
}

/// Whether an engine holds the data directory's lock (never creates the lock file).
pub fn engine_lock_held(data_dir: &Path) -> bool {
    let Ok(file) = File::open(lock_path(data_dir)) else {
        return false;
    };
    match file.try_lock_shared() {
        // Nobody holds it: released at once (dropping the file), an engine may start.
        Ok(()) => false,
        Err(std::fs::TryLockError::WouldBlock) => true,
        Err(std::fs::TryLockError::Error(_)) => false,
    }
}

/// Whether the process `pid` runs as this user. A pid that another user's process took over
/// (the engine died, its number was reused) is not alive for us.
#[cfg(unix)]
pub fn process_alive(pid: u32) -> bool {
    i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .is_some_and(|pid| rustix::process::test_kill_process(pid).is_ok())
}

/// Windows: the lock is the check (and the engine clears a stale `api.json` as it takes it).
#[cfg(not(unix))]
pub fn process_alive(_pid: u32) -> bool {
    true
}

/// Writes `bytes` to `path` as a new owner-only file that replaces the old one at once: made
/// under a fresh random name (created exclusively, so a planted link is never followed), then
/// renamed over `path` (which replaces a link there rather than writing through it).
fn write_private(data_dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), DiscoveryError> {
    // tempfile creates it with O_EXCL and mode 0600 on Unix.
    let mut file = tempfile::NamedTempFile::new_in(data_dir).map_err(io(data_dir))?;
    file.write_all(bytes).map_err(io(path))?;
    file.as_file().sync_all().map_err(io(path))?;
    file.persist(path).map_err(|e| io(path)(e.error))?;
    Ok(())
}

/// A new bearer token for this start of the engine, owner-only: a token read by anyone before
/// (a client of an engine that crashed, a listener that impersonated it) is worth nothing now.
pub fn create_token(data_dir: &Path) -> Result<String, DiscoveryError> {
    let token = format!(
        "{:032x}{:032x}",
        rand::random::<u128>(),
        rand::random::<u128>()
    );
    write_private(data_dir, &token_path(data_dir), token.as_bytes())?;
    Ok(token)
}

/// Publishes where the engine listens: clients find it from here on.
pub fn publish(data_dir: &Path, endpoint: &Endpoint) -> Result<(), DiscoveryError> {
    let path = endpoint_path(data_dir);
    let text = serde_json::to_string(endpoint).map_err(|e| io(&path)(std::io::Error::other(e)))?;
    write_private(data_dir, &path, text.as_bytes())
}

/// Clients are told that no engine runs: `api.json` and the socket go.
pub fn remove_endpoint(data_dir: &Path) {
    let _ = std::fs::remove_file(endpoint_path(data_dir));
    let _ = std::fs::remove_file(socket_path(data_dir));
}

/// The running engine's endpoint and token, or a clear "not running": only once the data
/// directory's lock is held and the pid in `api.json` is alive, so nothing is ever sent to an
/// address a dead engine left behind.
pub fn find(data_dir: &Path) -> Result<(Endpoint, String), DiscoveryError> {
    let not_running = || DiscoveryError::NotRunning(data_dir.to_path_buf());
    let text = std::fs::read_to_string(endpoint_path(data_dir)).map_err(|_| not_running())?;
    let mut endpoint: Endpoint = serde_json::from_str(&text).map_err(|_| not_running())?;
    if !engine_lock_held(data_dir) || !process_alive(endpoint.pid) {
        return Err(not_running());
    }
    // The socket as this client names the data directory (the engine's relative path would
    // be relative to the engine's working directory).
    endpoint.socket = endpoint.socket.map(|_| socket_path(data_dir));
    let token = std::fs::read_to_string(token_path(data_dir)).map_err(|_| not_running())?;
    Ok((endpoint, token.trim().to_string()))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn endpoint(pid: u32) -> Endpoint {
        Endpoint {
            addr: "127.0.0.1:9".parse().unwrap(),
            pid,
            socket: None,
        }
    }

    #[test]
    fn a_file_left_behind_without_the_lock_is_not_running() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(lock_path(dir.path()), "").unwrap();
        publish(dir.path(), &endpoint(std::process::id())).unwrap();
        create_token(dir.path()).unwrap();
        assert!(matches!(
            find(dir.path()),
            Err(DiscoveryError::NotRunning(_))
        ));
        let _lock = EngineLock::acquire(dir.path()).unwrap();
        publish(dir.path(), &endpoint(std::process::id())).unwrap();
        assert!(find(dir.path()).is_ok());
    }

    /// An engine starting on a killed one's directory: until it publishes, no client finds
    /// the dead one's address (on Windows, where the pid is not checked, this is the check).
    #[test]
    fn taking_the_lock_clears_what_a_killed_engine_left() {
        let dir = tempfile::tempdir().unwrap();
        publish(dir.path(), &endpoint(std::process::id())).unwrap();
        std::fs::write(socket_path(dir.path()), "").unwrap();
        let _lock = EngineLock::acquire(dir.path()).unwrap();
        assert!(!endpoint_path(dir.path()).exists());
        assert!(!socket_path(dir.path()).exists());
        assert!(matches!(
            find(dir.path()),
            Err(DiscoveryError::NotRunning(_))
        ));
    }

    /// An engine started with a relative `--data-dir` names its socket from its own working
    /// directory: a client connects to the one in the data directory it was given.
    #[test]
    fn the_socket_is_the_one_in_the_clients_data_directory() {
        let dir = tempfile::tempdir().unwrap();
        let _lock = EngineLock::acquire(dir.path()).unwrap();
        let elsewhere = Endpoint {
            socket: Some(PathBuf::from("relative/to/the/engine/api.sock")),
            ..endpoint(std::process::id())
        };
        publish(dir.path(), &elsewhere).unwrap();
        create_token(dir.path()).unwrap();
        let (found, _) = find(dir.path()).unwrap();
        assert_eq!(found.socket, Some(socket_path(dir.path())));
    }

    #[cfg(unix)]
    #[test]
    fn a_dead_pid_under_a_held_lock_is_not_running() {
        let dir = tempfile::tempdir().unwrap();
        let _lock = EngineLock::acquire(dir.path()).unwrap();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        publish(dir.path(), &endpoint(dead)).unwrap();
        create_token(dir.path()).unwrap();
        assert!(matches!(
            find(dir.path()),
            Err(DiscoveryError::NotRunning(_))
        ));
    }

    #[test]
    fn a_client_looking_at_the_lock_does_not_keep_an_engine_from_starting() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(lock_path(dir.path()), "").unwrap();
        let looking = File::open(lock_path(dir.path())).unwrap();
        looking.try_lock_shared().unwrap();
        let released = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            drop(looking);
        });
        assert!(EngineLock::acquire(dir.path()).is_ok());
        released.join().unwrap();
    }

    #[test]
    fn every_token_is_new() {
        let dir = tempfile::tempdir().unwrap();
        let first = create_token(dir.path()).unwrap();
        let second = create_token(dir.path()).unwrap();
        assert_ne!(first, second);
        assert_eq!(
            std::fs::read_to_string(token_path(dir.path())).unwrap(),
            second
        );
    }

    /// Links planted where the files go are replaced, never written through.
    #[cfg(unix)]
    #[test]
    fn the_files_are_owner_only_and_planted_links_are_not_followed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir(&data).unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(
            &victim,
            "the victim's own text, long enough to pass for a token",
        )
        .unwrap();
        for name in ["token", "api.json", "api.json.tmp"] {
            std::os::unix::fs::symlink(&victim, data.join(name)).unwrap();
        }
        let token = create_token(&data).unwrap();
        publish(&data, &endpoint(1)).unwrap();
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "the victim's own text, long enough to pass for a token"
        );
        assert!(!token.contains("victim"));
        for name in ["token", "api.json"] {
            let meta = std::fs::symlink_metadata(data.join(name)).unwrap();
            assert!(meta.is_file(), "{name} is a file of its own");
            assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{name}");
        }
    }
}
