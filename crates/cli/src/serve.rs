//! `airlock serve`: the engine that owns a data directory, with its local API on loopback.

use airlock_api::host::Host;
use airlock_engine::Database;
use anyhow::Context;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

pub async fn run(
    data_dir: &Path,
    listen: &str,
    workspace: Option<PathBuf>,
    database_url: Option<String>,
) -> anyhow::Result<ExitCode> {
    let addr: SocketAddr = listen
        .parse()
        .with_context(|| format!("--listen '{listen}' is not an address like 127.0.0.1:7777"))?;
    // Beyond loopback, the local API stays on loopback and a team server listens there over
    // HTTPS; never plain HTTP off this machine.
    let team = !addr.ip().is_loopback();
    let local = if team {
        SocketAddr::from(([127, 0, 0, 1], 0))
    } else {
        addr
    };
    let database = match database_url {
        Some(url) => shared_database(url)?,
        None => Database::DataDir,
    };
    let shared = database.is_shared();
    let (host, served) = Host::start_serving(data_dir, workspace, local, database).await?;
    if shared {
        // Never the URL: it may hold a password.
        println!("State in PostgreSQL, shared with every replica on that database");
    }
    println!(
        "Airlock engine for {} listening on http://{}",
        data_dir.display(),
        host.addr
    );
    if team {
        let (bound, certificate) = host.serve_team(addr).await?;
        println!(
            "Team server on https://{bound} (certificate {}; clients trust {} with --engine-cert)",
            certificate.fingerprint,
            data_dir.join("team-cert.pem").display()
        );
    }
    if let Some(socket) = &host.socket {
        println!(
            "and on {} (for the airlock commands, the hook and mcp-proxy)",
            socket.display()
        );
    }
    println!("Workspace: {}", host.engine.workspace().display());
    let result = tokio::select! {
        result = served => result.context("the local API stopped"),
        _ = shutdown_signal() => Ok(()),
    };
    drop(host);
    result.map(|()| ExitCode::SUCCESS)
}

/// The team's shared PostgreSQL database at `url`, opened when the engine opens.
#[cfg(feature = "postgres")]
fn shared_database(url: String) -> anyhow::Result<Database> {
    use airlock_store_postgres::{PostgresStore, REPLICA_CONNECTIONS};
    Ok(Database::shared(move || {
        PostgresStore::connect(&url, REPLICA_CONNECTIONS)
    }))
}

/// Built without PostgreSQL: refused before anything starts, never a silent SQLite file.
#[cfg(not(feature = "postgres"))]
fn shared_database(_url: String) -> anyhow::Result<Database> {
    anyhow::bail!(
        "--database-url (AIRLOCK_DATABASE_URL): this airlock was built without PostgreSQL; \
         build it with the `postgres` feature (`cargo build -p airlock-cli`, on by default), \
         or leave --database-url out to keep the state in the data directory's SQLite file"
    )
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
