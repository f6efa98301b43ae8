//! Hosting an engine: the one owner of a data directory, and the one composition root that both
//! `airlock serve` and the desktop app use — the data directory's lock, the engine, its MCP
//! servers, the agents it hosts over ACP, the local API and its discovery files, and their shutdown in that order's reverse.
//! Both find the data directory the same way, so the CLI talks to whichever runs.

use airlock_client::NoDataDir;
use airlock_client::discovery::{self, DiscoveryError, Endpoint, EngineLock};
pub use airlock_client::program::{ALREADY_RUNNING_EXIT, HostArgs, log_to_stderr};
pub use airlock_client::{DATA_DIR_ENV, default_data_dir, resolve_data_dir};
use airlock_engine::{Database, Engine, EngineConfig, EngineError};
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
    #[error("the team server: {0}")]
    Team(#[from] airlock_remote::RemoteError),
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
    /// The local API's token (this start's), which the team server's listener accepts too.
    token: String,
    /// The team server's HTTPS listener, when one serves (`airlock serve --listen` on an
    /// address other than loopback).
    team: std::sync::Mutex<Option<airlock_remote::RemoteServer>>,
}

impl Host {
    /// Takes the data directory's lock (refusing if another engine holds it), opens the engine,
    /// binds the API and writes `api.json`. Returns the host and the API future to drive.
    pub async fn start(
        data_dir: &Path,
        workspace: Option<PathBuf>,
        listen: SocketAddr,
    ) -> Result<(Self, impl Future<Output = std::io::Result<()>> + use<>), HostError> {
        Self::start_serving(data_dir, workspace, listen, Database::DataDir).await
    }

    /// [`Host::start`] on this database (`airlock serve --database-url`).
    pub async fn start_serving(
        data_dir: &Path,
        workspace: Option<PathBuf>,
        listen: SocketAddr,
        database: Database,
    ) -> Result<(Self, impl Future<Output = std::io::Result<()>> + use<>), HostError> {
        Self::start_on(
            data_dir,
            workspace,
            listen,
            Box::new(|_, _| axum::Router::new()),
            database,
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
        Self::start_on(data_dir, workspace, listen, extra, Database::DataDir).await
    }

    /// [`Host::start_with`] on this database: on a shared one (PostgreSQL), one replica among
    /// several behind a load balancer (docs/TEAM.md).
    pub async fn start_on(
        data_dir: &Path,
        workspace: Option<PathBuf>,
        listen: SocketAddr,
        extra: ExtraRoutes<'_>,
        database: Database,
    ) -> Result<(Self, impl Future<Output = std::io::Result<()>> + use<>), HostError> {
        let lock = EngineLock::acquire(data_dir)?;
        let engine = Engine::open_on(
            EngineConfig {
                data_dir: data_dir.to_path_buf(),
                workspace,
            },
            database,
        )?;
        // Before the API answers: a chat with an agent may be the first command.
        let acp = airlock_acp::AcpHost::start(&engine);
        let api = LocalApi::bind(data_dir, &lock, listen)
            .await?
            .with_agent_hooks(&engine)
            .await;
        let addr = api.endpoint.addr;
        let socket = api.endpoint.socket.clone();
        let routes = extra(&engine, addr);
        let token = api.token.clone();
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
                token,
                team: std::sync::Mutex::new(None),
            },
            served,
        ))
    }

    pub fn data_dir(&self) -> &Path {
        &self.data_dir
    }

    /// Serves this engine's API to a team on `listen`, an address other than loopback, over
    /// HTTPS with a certificate made on first use and kept in the data directory (the phone
    /// inbox's way, with its own files): members reach the command table with their own
    /// tokens. The address bound and the certificate (its PEM, to give to clients, and its
    /// fingerprint).
    pub async fn serve_team(
        &self,
        listen: SocketAddr,
    ) -> Result<(SocketAddr, airlock_remote::tls::Certificate), HostError> {
        use airlock_remote::tls;
        if listen.ip().is_unspecified() {
            // The certificate is made for the address clients name; "every interface" is none.
            return Err(airlock_remote::RemoteError::Listen {
                addr: listen,
                message: "name the address clients reach (the certificate is made for it), not every interface".into(),
            }
            .into());
        }
        let certificate = tls::load_or_create_named(&self.data_dir, tls::TEAM, listen.ip())
            .map_err(airlock_remote::RemoteError::from)?;
        let (engine, token) = (self.engine.clone(), self.token.clone());
        let server = airlock_remote::serve_https(
            certificate.clone(),
            listen,
            "the team server",
            move |_| crate::server::team_router(engine, token),
        )
        .await?;
        let addr = server.addr;
        *self.team.lock().unwrap_or_else(|p| p.into_inner()) = Some(server);
        Ok((addr, certificate))
    }

    /// Stops what the engine runs, keeping the data directory's lock: clients are told first
    /// that no engine runs, then the phone inbox, the push and the MCP servers stop, and this
    /// waits up to `within` for the servers' processes to be gone. A process that quits calls
    /// this and then keeps the host until it exits, so no second engine can start on the
    /// directory while this one still ends.
    pub async fn stop(&self, within: std::time::Duration) {
        discovery::remove_endpoint(&self.data_dir);
        self.team.lock().unwrap_or_else(|p| p.into_inner()).take();
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
    /// The loopback port agents' HTTP hooks post to ([`LocalApi::with_agent_hooks`]).
    agent_hooks: Option<tokio::net::TcpListener>,
}

/// Where a port for agents' HTTP hooks is picked: below Linux's range for outgoing connections
/// (32768–60999), so the port is not one a connection happens to hold at the next start.
const AGENT_HOOK_PORTS: std::ops::RangeInclusive<u16> = 20000..=32767;

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
            agent_hooks: None,
        })
    }

    /// Also listens where agents' HTTP hooks post (`airlock connect AGENT --http` writes the
    /// URL into the agent's config): the port kept from the last start, so that URL stays this
    /// engine's and a stopped engine's hook finds nobody (the agent then blocks the call); on
    /// the first start, or when another process took that port meanwhile (logged: the agents'
    /// hooks would post there, so `connect --http` must be run again), a new one, kept.
    pub async fn with_agent_hooks(mut self, engine: &Engine) -> Self {
        let bind = |port: u16| {
            tokio::net::TcpListener::bind(SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port)))
        };
        let kept = engine.agent_hook_port().unwrap_or_else(|error| {
            tracing::warn!("cannot read the agents' HTTP hook port: {error}");
            None
        });
        if let Some(port) = kept {
            match bind(port).await {
                Ok(listener) => {
                    self.agent_hooks = Some(listener);
                    return self;
                }
                Err(error) => tracing::warn!(
                    "the agents' HTTP hook port {port} is taken ({error}): hooks installed with `airlock connect AGENT --http` post there; run it again to move them to the new port"
                ),
            }
        }
        for _ in 0..64 {
            let port = rand::random_range(AGENT_HOOK_PORTS);
            if let Ok(listener) = bind(port).await {
                match engine.set_agent_hook_port(port) {
                    Ok(()) => self.agent_hooks = Some(listener),
                    Err(error) => {
                        tracing::warn!("cannot keep the agents' HTTP hook port: {error}")
                    }
                }
                return self;
            }
        }
        tracing::warn!("found no free port for the agents' HTTP hooks");
        self
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
        let agent_hooks = self.agent_hooks.map(|listener| {
            crate::serve_with(engine.clone(), listener, self.token.clone(), extra.clone())
        });
        let tcp = async move {
            match agent_hooks {
                Some(agent_hooks) => tokio::try_join!(tcp, agent_hooks).map(|_| ()),
                None => tcp.await,
            }
        };
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

    /// The URL an agent's HTTP hook was given stays this engine's: the next start listens on
    /// the same port; while the engine is stopped nothing answers there.
    #[tokio::test]
    async fn the_agents_hook_port_is_kept_across_restarts() {
        let dir = tempfile::tempdir().unwrap();
        let loopback: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let workspace = Some(dir.path().join("workspace"));
        let (host, served) = Host::start(dir.path(), workspace.clone(), loopback)
            .await
            .unwrap();
        let port = host.engine.agent_hook_port().unwrap().unwrap();
        assert!(AGENT_HOOK_PORTS.contains(&port));
        let hooks = SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port));
        assert!(tokio::net::TcpStream::connect(hooks).await.is_ok());
        drop((host, served));
        assert!(
            tokio::net::TcpStream::connect(hooks).await.is_err(),
            "something answers the agents' hooks while no engine runs"
        );
        let (host, _served) = Host::start(dir.path(), workspace, loopback).await.unwrap();
        assert_eq!(host.engine.agent_hook_port().unwrap(), Some(port));
        assert!(tokio::net::TcpStream::connect(hooks).await.is_ok());
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
