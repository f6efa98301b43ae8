//! `airlock serve`: the engine that owns a data directory, with its local API on loopback.

use airlock_api::discovery::{self, EngineLock, Endpoint};
use airlock_engine::{Engine, EngineConfig};
use anyhow::{Context, bail};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub async fn run(data_dir: &Path, listen: &str, workspace: Option<PathBuf>) -> anyhow::Result<ExitCode> {
    let addr: SocketAddr = listen.parse().with_context(|| format!("--listen '{listen}' is not an address like 127.0.0.1:7777"))?;
    if !addr.ip().is_loopback() {
        bail!("the local API listens on loopback only; {addr} is not a loopback address");
    }
    let _lock = EngineLock::acquire(data_dir)?;
    let engine = Engine::open(EngineConfig { data_dir: data_dir.to_path_buf(), workspace })?;
    let mcp = airlock_mcp::McpManager::start(&engine);
    let token = discovery::load_or_create_token(data_dir)?;
    let listener = tokio::net::TcpListener::bind(addr).await.with_context(|| format!("cannot listen on {addr}"))?;
    let bound = listener.local_addr()?;
    discovery::write_endpoint(data_dir, &Endpoint { addr: bound, pid: std::process::id() })?;
    println!("Airlock engine for {} listening on http://{bound}", data_dir.display());
    println!("Workspace: {}", engine.workspace().display());
    let served = airlock_api::serve(engine, listener, token);
    let result = tokio::select! {
        result = served => result.context("the local API stopped"),
        _ = shutdown_signal() => Ok(()),
    };
    discovery::remove_endpoint(data_dir);
    mcp.stop_all();
    result.map(|()| ExitCode::SUCCESS)
}

async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
