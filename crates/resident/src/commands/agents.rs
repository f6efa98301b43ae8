//! Settings → Agents: connect Claude Code and Codex (their hook entries run the `airlock`
//! command-line tool that ships beside the app), their fallbacks and last requests.

use super::{CommandError, CommandResult};
use airlock_agents::connect::{ConnectError, ConnectReport, Options, Target};
use airlock_engine::{Engine, ErrorCode};
use airlock_protocol::AgentStatus;
use std::path::PathBuf;

fn connect_error(error: ConnectError) -> CommandError {
    CommandError {
        code: ErrorCode::Invalid,
        message: error.to_string(),
    }
}

/// The `airlock` binary beside the app's own (the packages install both in one folder).
fn airlock_binary() -> CommandResult<PathBuf> {
    let name = if cfg!(windows) {
        "airlock.exe"
    } else {
        "airlock"
    };
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(name)))
        .filter(|path| path.is_file());
    beside.ok_or_else(|| CommandError {
        code: ErrorCode::Invalid,
        message: format!(
            "the `{name}` command-line tool is not beside this app; install the full package (or build it: cargo build --release -p airlock-cli)"
        ),
    })
}

fn options(engine: &Engine) -> CommandResult<Options> {
    let data_dir = engine.data_dir().to_path_buf();
    let default = airlock_api::host::resolve_data_dir(None).ok();
    Ok(Options {
        airlock: airlock_binary()?,
        data_dir: (default.as_ref() != Some(&data_dir)).then_some(data_dir),
        timeout_secs: airlock_agents::connect::DEFAULT_TIMEOUT_SECS,
        codex: None,
    })
}

fn target(agent: &str) -> CommandResult<Target> {
    Target::parse(agent, None).map_err(connect_error)
}

/// Each agent as its own config shows it, with what the engine knows of it.
pub fn statuses(engine: &Engine) -> CommandResult<Vec<AgentStatus>> {
    let views = engine
        .agents()
        .map_err(|e| airlock_engine::commands::Caller::Window.error(e))?;
    airlock_agents::connect::statuses(&views).map_err(connect_error)
}

/// Installs the agent's hook (its own config), then, inside Airlock, sets its read-only tools to
/// "approval not required" unless the person chose otherwise — as `airlock connect` does.
pub fn connect(engine: &Engine, agent: &str) -> CommandResult<ConnectReport> {
    let target = target(agent)?;
    let mut report =
        airlock_agents::connect::connect(&target, &options(engine)?).map_err(connect_error)?;
    if target.agent().dialect().is_some() {
        let defaults = engine
            .connect_agent_defaults(target.name())
            .map_err(|e| airlock_engine::commands::Caller::Window.error(e))?;
        if !defaults.set.is_empty() {
            report.changes.push(format!(
                "In Airlock, its read-only tools need no approval now: {} (Settings → Tools)",
                defaults.set.join(", ")
            ));
        }
        if !defaults.kept.is_empty() {
            report.changes.push(format!(
                "Your own settings kept: {}",
                defaults.kept.join(", ")
            ));
        }
    }
    Ok(report)
}

pub fn disconnect(agent: &str) -> CommandResult<ConnectReport> {
    airlock_agents::connect::disconnect(&target(agent)?).map_err(connect_error)
}
