//! Airlock desktop. Two processes: the resident (`airlock-resident`: the engine, the local API,
//! the tray and notifications, small and always there) and this one, the window, which exists
//! only while the window is open. Launched plainly, this binary starts the resident when none
//! runs for the data directory and becomes the window (or, started at login with `--hidden`,
//! leaves the resident in the tray); launched again, it asks the resident to show the window.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod launcher;
mod webkit_env;
mod window;

use airlock_client::program::{HostArgs, log_to_stderr};
use airlock_client::resolve_data_dir;
use clap::Parser;
use launcher::{Resident, ResidentOptions};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "airlock-desktop",
    version,
    about = "Airlock: the approval inbox for AI agent tool calls"
)]
struct Args {
    #[command(flatten)]
    host: HostArgs,
    /// Start in the tray without opening the window (how the login entry starts Airlock).
    #[arg(long)]
    hidden: bool,
    /// Open only the window, for the running resident (how the resident opens it).
    #[arg(long, conflicts_with = "hidden")]
    window: bool,
}

fn main() -> ExitCode {
    let args = Args::parse();
    webkit_env::apply_defaults();
    log_to_stderr();
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("airlock-desktop: {error:#}");
            ExitCode::from(1)
        }
    }
}

/// Why the window cannot open here, when the platform has no display to open it on. GTK would
/// otherwise panic with a backtrace deep inside the toolkit.
fn missing_display() -> Option<&'static str> {
    let set = |name| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    (cfg!(all(unix, not(target_os = "macos"))) && !set("DISPLAY") && !set("WAYLAND_DISPLAY"))
        .then_some(
            "no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is set); \
             run the headless engine instead: `airlock serve`",
        )
}

fn run(args: Args) -> anyhow::Result<()> {
    let data_dir = resolve_data_dir(args.host.data_dir.clone())?;
    let wants_window = !args.hidden;
    if wants_window && let Some(why) = missing_display() {
        anyhow::bail!(why);
    }
    if !args.window {
        let resident = launcher::ensure_resident(&ResidentOptions {
            data_dir: &data_dir,
            host: &args.host,
            show_window: wants_window,
        })?;
        if matches!(resident, Resident::AlreadyRunning) || !wants_window {
            return Ok(());
        }
    }
    window::run(&data_dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_login_entry_starts_hidden() {
        let parsed = Args::try_parse_from(["airlock-desktop", "--hidden"]);
        assert!(parsed.is_ok_and(|args| args.hidden && !args.window));
        let parsed = Args::try_parse_from(["airlock-desktop", "--data-dir", "/tmp/x"]);
        assert!(parsed.is_ok_and(|args| !args.hidden));
        assert!(Args::try_parse_from(["airlock-desktop", "--hidden", "--window"]).is_err());
    }
}
