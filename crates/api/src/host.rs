//! Hosting an engine: the one owner of a data directory, and the one composition root that both
//! `airlock serve` and the desktop app use — the data directory's lock, the engine, its MCP
//! servers, the agents it hosts over ACP, the local API and its discovery files, and their shutdown in that order's reverse.
//! Both find the data directory the same way, so the CLI talks to whichever runs.

use airlock_client::NoDataDir;
use airlock_client::discovery::{self, DiscoveryError, Endpoint, EngineLock};
pub use airlock_client::program::{ALREADY_RUNNING_EXIT, HostArgs, log_to_stderr};
pub use airlock_client::{DATA_DIR_ENV, default_data_dir, resolve_data_dir};
use airlock_engine::{Engine, EngineConfig, EngineError};
use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum HostError {
    #[error(transparent)]
    Discovery(#[from] DiscoveryError),
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("the local API listens on loopback only; {0} is not a loopback address")]
    NotLoopback(SocketAddr),
    #[error("cannot listen on {addr}: {message}")]
    Listen { addr: SocketAddr, message: String },
    #[error(transparent)]
    NoDataDir(#[from] NoDataDir),
}

/// More routes for the local API, made from the engine and the API's address.
pub type ExtraRoutes<'a> = Box<dyn FnOnce(&Engine, SocketAddr) -> axum::Router + 'a>;

/// A running engine with its MCP servers that owns its data directory; dropping it removes the
/// discovery file and stops the servers.
#[derive(Debug)]
pub struct Host {
    pub engine: Engine,
    pub addr: SocketAddr,
    /// The Unix socket the CLI, the hook and mcp-proxy use (none on Windows).
    pub socket: Option<PathBuf>,
    data_dir: PathBuf,
    _lock: EngineLock,
    mcp: std::sync::Arc<airlock_mcp::McpManager>,
    /// The agents hosting chats over ACP.
    acp: std::sync::Arc<airlock_acp::AcpHost>,
    /// Starts and stops the phone inbox as its setting changes.
    remote: tokio::task::JoinHandle<()>,
    /// The ntfy push when approvals wait.
    push: tokio::task::JoinHandle<()>,
}

impl Host {
    /// Takes the data directory's lock (refusing if another engine holds it), opens the engine,
    /// binds the API and writes `api.json`. Returns the host and the API future to drive.
    pub async fn start(
        data_dir: &Path,
        workspace: Option<PathBuf>,
        listen: SocketAddr,
    ) -> Result<(Self, impl Future<Output = std::io::Result<()>> + use<>), HostError> {
        Self::start_with(
            data_dir,
            workspace,
            listen,
            Box::new(|_, _| axum::Router::new()),
        )
        .await
    }

    /// [`Host::start`] serving more routes on the API, made from the engine and the API's
    /// address (the desktop app's resident process serves its window's commands this way).
    pub async fn start_with(
        data_dir: &Path,
        workspace: Option<PathBuf>,
        listen: SocketAddr,
        extra: ExtraRoutes<'_>,
    ) -> Result<(Self, impl Future<Output = std::io::Result<()>> + use<>), HostError> {
        let lock = EngineLock::acquire(data_dir)?;
        let engine = Engine::open(EngineConfig {
            data_dir: data_dir.to_path_buf(),
            workspace,
        })?;
        // Before the API answers: a chat with an agent may be the first command.
        let acp = airlock_acp::AcpHost::start(&engine);
        let api = LocalApi::bind(data_dir, &lock, listen).await?;
        let addr = api.endpoint.addr;
        let socket = api.endpoint.socket.clone();
        let routes = extra(&engine, addr);
        api.publish(data_dir)?;
        let served = api.serve_with(engine.clone(), routes);
        let mcp = airlock_mcp::McpManager::start(&engine);
        let remote = tokio::spawn(run_remote(engine.clone(), data_dir.to_path_buf()));
        let push = tokio::spawn(airlock_remote::push::run(engine.clone()));
        Ok((
            Self {
                engine,
                addr,
                socket,
                data_dir: data_dir.to_path_buf(),
                mcp,
                acp,
                _lock: lock,
                remote,
                push,
            },
            served,
        ))
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Stops what the engine runs, keeping the data directory's lock: clients are told first
    /// that no engine runs, then the phone inbox, the push and the MCP servers stop, and this
    /// waits up to `within` for the servers' processes to be gone. A process that quits calls
    /// this and then keeps the host until it exits, so no second engine can start on the
    /// directory while this one still ends.
    pub async fn stop(&self, within: std::time::Duration) {
        discovery::remove_endpoint(&self.data_dir);
        self.remote.abort();
        self.push.abort();
        let children: Vec<u32> = self.mcp.pids().into_iter().chain(self.acp.pids()).collect();
        self.mcp.stop_all();
        self.acp.stop_all();
        let deadline = tokio::time::Instant::now() + within;
        while children.iter().any(|pid| discovery::process_alive(*pid))
            && tokio::time::Instant::now() < deadline
        {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        // Clients are told first that no engine runs, then the servers stop.
        discovery::remove_endpoint(&self.data_dir);
        self.mcp.stop_all();
        self.acp.stop_all();
        self.remote.abort();
        self.push.abort();
    }
}

/// The local API of an engine whose data directory's lock this process holds: a token new to
/// this start, the loopback port and (on Unix) the socket `api.sock` in the data directory.
#[derive(Debug)]
pub struct LocalApi {
    tcp: tokio::net::TcpListener,
    #[cfg(unix)]
    socket: Option<tokio::net::UnixListener>,
    token: String,
    pub endpoint: Endpoint,
}

impl LocalApi {
    /// Makes a new token and binds; clients find nothing until [`LocalApi::publish`]. Only for
    /// the holder of the data directory's lock (`_lock`), which cleared a killed engine's files.
    pub async fn bind(
        data_dir: &Path,
        _lock: &EngineLock,
        listen: SocketAddr,
    ) -> Result<Self, HostError> {
        if !listen.ip().is_loopback() {
            return Err(HostError::NotLoopback(listen));
        }
        let token = discovery::create_token(data_dir)?;
        let listen_error = |e: std::io::Error| HostError::Listen {
            addr: listen,
            message: e.to_string(),
        };
        let tcp = tokio::net::TcpListener::bind(listen)
            .await
            .map_err(listen_error)?;
        let addr = tcp.local_addr().map_err(listen_error)?;
        #[cfg(unix)]
        let socket = bind_socket(data_dir);
        Ok(Self {
            endpoint: Endpoint {
                addr,
                pid: std::process::id(),
                #[cfg(unix)]
                socket: socket.as_ref().map(|_| {
                    let path = discovery::socket_path(data_dir);
                    std::path::absolute(&path).unwrap_or(path)
                }),
                #[cfg(not(unix))]
                socket: None,
            },
            tcp,
            #[cfg(unix)]
            socket,
            token,
        })
    }

    /// Writes `api.json`: clients find this engine from now on.
    pub fn publish(&self, data_dir: &Path) -> Result<(), DiscoveryError> {
        discovery::publish(data_dir, &self.endpoint)
    }

    /// Serves the API on every listener until the future is dropped.
    pub fn serve(self, engine: Engine) -> impl Future<Output = std::io::Result<()>> + use<> {
        self.serve_with(engine, axum::Router::new())
    }

    /// [`LocalApi::serve`] with more routes behind the same checks.
    pub fn serve_with(
        self,
        engine: Engine,
        extra: axum::Router,
    ) -> impl Future<Output = std::io::Result<()>> + use<> {
        let tcp = crate::serve_with(engine.clone(), self.tcp, self.token.clone(), extra.clone());
        #[cfg(unix)]
        let socket = self
            .socket
            .map(|socket| crate::server::serve_socket(engine, socket, self.token, extra));
        #[cfg(not(unix))]
        let socket: Option<std::future::Ready<std::io::Result<()>>> = {
            let _ = (engine, self.token);
            None
        };
        async move {
            match socket {
                Some(socket) => tokio::try_join!(tcp, socket).map(|_| ()),
                None => tcp.await,
            }
        }
    }
}

/// The socket in the data directory (0700), itself owner-only. Where it cannot be bound (a
/// path longer than a socket's address allows, a file system without sockets) clients use the
/// loopback port, after the same checks.
#[cfg(unix)]
fn bind_socket(data_dir: &Path) -> Option<tokio::net::UnixListener> {
    use std::os::unix::fs::PermissionsExt;
    let path = discovery::socket_path(data_dir);
    let bound = tokio::net::UnixListener::bind(&path).and_then(|socket| {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        Ok(socket)
    });
    match bound {
        Ok(socket) => Some(socket),
        Err(error) => {
            tracing::warn!(
                "cannot listen on {}: {error}; clients use the loopback port",
                path.display()
            );
            None
        }
    }
}

/// The phone inbox while this engine runs: on where its setting says, restarted when the setting
/// changes, off when it is cleared. A failure to listen is logged and the rest goes on.
async fn run_remote(engine: Engine, data_dir: PathBuf) {
    let mut events = engine.subscribe();
    let mut running: Option<airlock_remote::RemoteServer> = None;
    let mut want = engine.remote_listen().ok().flatten();
    loop {
        if running.as_ref().map(|r| r.addr) != want {
            running = None;
            if let Some(addr) = want {
                match airlock_remote::start(engine.clone(), &data_dir, addr).await {
                    Ok(server) => {
                        tracing::info!(addr = %server.addr, "the phone inbox listens");
                        running = Some(server);
                    }
                    Err(error) => tracing::warn!("{error}"),
                }
            }
        }
        loop {
            match events.recv().await {
                Ok(airlock_engine::EngineEvent::RemoteChanged { .. }) => break,
                Ok(_) | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
        want = engine.remote_listen().ok().flatten();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    /// A host for `dir` on a loopback port; its API is not served (these tests look at the
    /// data directory's files and lock).
    async fn start_in(dir: &Path) -> Result<Host, HostError> {
        let loopback: SocketAddr = "127.0.0.1:0".parse().unwrap();
        Host::start(dir, Some(dir.join("workspace")), loopback)
            .await
            .map(|(host, _served)| host)
    }

    /// Every start has a new token, and `api.json` points at the socket in the data directory.
    #[tokio::test]
    async fn each_start_rotates_the_token() {
        let dir = tempfile::tempdir().unwrap();
        let host = start_in(dir.path()).await.unwrap();
        let (endpoint, first) = discovery::find(dir.path()).unwrap();
        #[cfg(unix)]
        assert_eq!(endpoint.socket, Some(discovery::socket_path(dir.path())));
        #[cfg(not(unix))]
        let _ = endpoint;
        drop(host);
        let _host = start_in(dir.path()).await.unwrap();
        let (_, second) = discovery::find(dir.path()).unwrap();
        assert_ne!(first, second);
    }

    /// Quit stops what the engine runs and tells clients it is gone, but keeps the directory:
    /// no second engine starts on it until the host (the process) is gone.
    #[tokio::test]
    async fn a_stopped_host_is_not_running_and_still_holds_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let host = start_in(dir.path()).await.unwrap();
        host.stop(std::time::Duration::from_secs(1)).await;
        assert!(matches!(
            discovery::find(dir.path()),
            Err(DiscoveryError::NotRunning(_))
        ));
        assert!(discovery::engine_lock_held(dir.path()));
        let second = start_in(dir.path()).await.map(|_| ());
        assert!(
            matches!(second, Err(HostError::Discovery(DiscoveryError::Locked(_)))),
            "{second:?}"
        );
        drop(host);
        assert!(!discovery::engine_lock_held(dir.path()));
    }

    #[tokio::test]
    async fn a_second_host_for_the_same_directory_is_refused_and_the_first_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let host = start_in(dir.path()).await.unwrap();
        let second = start_in(dir.path()).await.map(|_| ());
        assert!(
            matches!(second, Err(HostError::Discovery(DiscoveryError::Locked(_)))),
            "{second:?}"
        );
        let (endpoint, _) = discovery::find(dir.path()).unwrap();
        assert_eq!(endpoint.addr, host.addr);
        drop(host);
        assert!(discovery::find(dir.path()).is_err());
    }
}
