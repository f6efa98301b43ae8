//! Airlock desktop: a thin Tauri shell. It runs the engine in-process, serves the local API
//! (so the `airlock` CLI works against the running app), forwards engine events to the UI and
//! holds no rule of its own. One instance per data directory.

#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod bindings;
mod commands;
mod events;
mod notifications;
mod pending;
mod shell;
mod tray;
mod webkit_env;
mod window;

use airlock_api::ApiClient;
use airlock_api::discovery::DiscoveryError;
use airlock_api::host::{Host, HostError, resolve_data_dir};
use clap::Parser;
use shell::Shell;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use tauri::{Manager, RunEvent};

#[derive(Parser, Debug)]
#[command(
    name = "airlock-desktop",
    version,
    about = "Airlock: the approval inbox for AI agent tool calls"
)]
struct Args {
    /// The data directory (default: $AIRLOCK_DATA_DIR, else the platform's data folder).
    #[arg(long, env = "AIRLOCK_DATA_DIR")]
    data_dir: Option<PathBuf>,
    /// Folder of the built-in tools (default: Airlock in your documents folder).
    #[arg(long)]
    workspace: Option<PathBuf>,
    /// Port of the local API on 127.0.0.1 (default: any free port; see DATA_DIR/api.json).
    #[arg(long, default_value_t = 0)]
    api_port: u16,
    /// Start in the tray without opening the window (how the login entry starts Airlock).
    #[arg(long)]
    hidden: bool,
}

/// The argument the login entry (Settings → Start at login) starts Airlock with.
const HIDDEN_ARG: &str = "--hidden";

fn main() -> ExitCode {
    let args = Args::parse();
    webkit_env::apply_defaults();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("AIRLOCK_LOG")
                .unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
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
    if let Some(why) = missing_display() {
        anyhow::bail!(why);
    }
    let data_dir = resolve_data_dir(args.data_dir)?;
    let listen = SocketAddr::from((Ipv4Addr::LOCALHOST, args.api_port));
    let started = tauri::async_runtime::block_on(async {
        Host::start(&data_dir, args.workspace, listen).await
    });
    let (host, served) = match started {
        Ok(started) => started,
        Err(HostError::Discovery(DiscoveryError::Locked(dir))) => return show_running_app(&dir),
        Err(error) => return Err(error.into()),
    };
    tauri::async_runtime::spawn(async move {
        if let Err(error) = served.await {
            tracing::error!("the local API stopped: {error}");
        }
    });
    let engine = host.engine.clone();
    let shell = Shell {
        engine: engine.clone(),
        api_addr: host.addr,
    };
    let hidden = args.hidden;
    let app = tauri::Builder::default()
        .plugin(
            tauri_plugin_autostart::Builder::new()
                .arg(HIDDEN_ARG)
                .build(),
        )
        .manage(shell)
        .manage(window::Navigation::default())
        .invoke_handler(command_handler!())
        .setup(move |app| {
            engine.set_frontend(Arc::new(window::WindowFrontend(app.handle().clone())));
            tray::install(app.handle())?;
            events::forward(app.handle().clone(), engine.clone());
            // The window is not created from the configuration (`create: false`): started at
            // login, Airlock waits in the tray until it is opened.
            if !hidden {
                window::show(app.handle());
            }
            Ok(())
        })
        .build(tauri::generate_context!())?;
    let mut host = Some(host);
    app.run(move |handle, event| {
        // Closing the window destroys it (its web process exits); Airlock keeps running
        // in the tray until Quit (`exit` gives a code; a window closing gives none).
        if let RunEvent::ExitRequested {
            code: None, api, ..
        } = &event
        {
            api.prevent_exit();
        }
        // macOS: a click on the running app's Dock icon (a second launch starts no process there)
        // brings back the window that was closed to the tray.
        #[cfg(target_os = "macos")]
        if let RunEvent::Reopen {
            has_visible_windows: false,
            ..
        } = &event
        {
            window::show(handle);
        }
        if let RunEvent::Exit = event {
            // Removes api.json, so the CLI says clearly that no engine runs; stops the servers.
            drop(host.take());
            let _ = handle.try_state::<Shell>();
        }
    });
    Ok(())
}

/// One instance per data directory: a second launch brings the running app's window forward.
fn show_running_app(dir: &Path) -> anyhow::Result<()> {
    let shown =
        tauri::async_runtime::block_on(async { ApiClient::discover(dir)?.show_window(None).await });
    match shown {
        Ok(true) => {
            eprintln!(
                "Airlock is already running for {}; showed its window",
                dir.display()
            );
            Ok(())
        }
        Ok(false) => anyhow::bail!(
            "`airlock serve` is already running for {}; stop it or use the CLI",
            dir.display()
        ),
        Err(error) => anyhow::bail!(
            "Airlock is already running for {} but does not answer: {error}",
            dir.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_login_entry_starts_hidden() {
        let parsed = Args::try_parse_from(["airlock-desktop", HIDDEN_ARG]);
        assert!(parsed.is_ok_and(|args| args.hidden));
        let parsed = Args::try_parse_from(["airlock-desktop", "--data-dir", "/tmp/x"]);
        assert!(parsed.is_ok_and(|args| !args.hidden));
    }
}
