//! What every program that hosts or opens the engine shares (the desktop window, its resident,
//! the CLI): the arguments that say which data directory, the exit code of a resident that
//! stepped back for another, and the log on standard error. Behind the `program` feature: the
//! hook parses its own few arguments and links no command-line parser.

use std::net::SocketAddr;
use std::path::PathBuf;

/// The exit code of a desktop resident that did not start because another process owns its data
/// directory (it asked that one to show its window): the launcher then knows Airlock runs.
pub const ALREADY_RUNNING_EXIT: u8 = 3;

/// The arguments every program that hosts the engine takes (the desktop app, its resident).
#[derive(clap::Args, Debug, Clone, PartialEq)]
pub struct HostArgs {
    /// The data directory (default: $AIRLOCK_DATA_DIR, else the platform's data folder).
    #[arg(long, env = "AIRLOCK_DATA_DIR")]
    pub data_dir: Option<PathBuf>,
    /// Folder of the built-in tools (default: Airlock in your documents folder).
    #[arg(long)]
    pub workspace: Option<PathBuf>,
    /// Port of the local API on 127.0.0.1 (default: any free port; see DATA_DIR/api.json).
    #[arg(long, default_value_t = 0)]
    pub api_port: u16,
}

impl HostArgs {
    pub fn listen(&self) -> SocketAddr {
        SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, self.api_port))
    }
}

/// Logs to standard error, as `AIRLOCK_LOG` says (default: warnings).
pub fn log_to_stderr() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("AIRLOCK_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
}
