//! `airlock-resident`: what stays of the desktop app while its window is closed — the engine
//! that owns the data directory, the local API (which also serves the window's commands), the
//! tray and the notifications — without GTK or WebKit, so that it stays small. The desktop app
//! (`airlock-desktop`) starts it, then opens its window as a separate process.

use airlock_api::ApiClient;
use airlock_api::discovery::{self, DiscoveryError};
use airlock_api::host::{
    ALREADY_RUNNING_EXIT, Host, HostArgs, HostError, log_to_stderr, resolve_data_dir,
};
use airlock_resident::autostart::LoginEntry;
use airlock_resident::shell::Shell;
use airlock_resident::shell::WindowFrontend;
use airlock_resident::window::Windows;
use airlock_resident::{desktop_api, events};
use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

#[derive(Parser, Debug)]
#[command(
    name = "airlock-resident",
    version,
    about = "The Airlock desktop app's resident process (engine, local API, tray); started by airlock-desktop"
)]
struct Args {
    #[command(flatten)]
    host: HostArgs,
}

/// How the tray starts: on Linux the resident registers its StatusNotifierItem itself; on macOS
/// and Windows the main thread runs the platform's event loop and puts the icon up when asked.
#[cfg(target_os = "linux")]
type TrayStart = ();
#[cfg(not(target_os = "linux"))]
type TrayStart = airlock_resident::tray::TrayStarter;

fn main() -> ExitCode {
    let args = Args::parse();
    log_to_stderr();
    #[cfg(not(target_os = "linux"))]
    airlock_resident::tray::run_with_tray(move |tray| serve(args, tray));
    #[cfg(target_os = "linux")]
    ExitCode::from(u8::try_from(serve(args, ())).unwrap_or(1))
}

/// How long Quit waits for the MCP servers' processes to end before the runtime shuts down
/// (which kills what is left): Quit ends the whole resident within 2 s.
const SERVERS_STOP_WITHIN: Duration = Duration::from_millis(1200);
/// How long tasks get to end once the runtime shuts down. Notifications hold no thread (each is
/// a task on the runtime); the bound is a safeguard against any other blocking task.
const RUNTIME_STOP_WITHIN: Duration = Duration::from_millis(300);

/// Runs the resident until it quits; its exit code.
fn serve(args: Args, tray: TrayStart) -> i32 {
    // Two worker threads are plenty for one person's inbox and keep the process small.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build();
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("airlock-resident: {error}");
            return 1;
        }
    };
    let result = runtime.block_on(run(args, tray));
    // Not a plain drop: that would wait for every blocking task without bound; Quit ends the
    // resident within 2 s whatever is still running.
    runtime.shutdown_timeout(RUNTIME_STOP_WITHIN);
    match result {
        Ok(host) => {
            // Never dropped: the data directory's lock goes with the process (the OS releases
            // it), so a launch while this one still ends finds it running, not a free directory.
            std::mem::forget(host);
            0
        }
        Err(Refused::AlreadyRunning(message)) => {
            eprintln!("airlock-resident: {message}");
            i32::from(ALREADY_RUNNING_EXIT)
        }
        Err(Refused::Failed(error)) => {
            eprintln!("airlock-resident: {error:#}");
            1
        }
    }
}

/// Why the resident did not run (or ended with an error).
enum Refused {
    /// Another process owns the data directory; the message says which.
    AlreadyRunning(String),
    Failed(anyhow::Error),
}

impl From<anyhow::Error> for Refused {
    fn from(error: anyhow::Error) -> Self {
        Refused::Failed(error)
    }
}

impl From<HostError> for Refused {
    fn from(error: HostError) -> Self {
        Refused::Failed(error.into())
    }
}

impl From<std::io::Error> for Refused {
    fn from(error: std::io::Error) -> Self {
        Refused::Failed(error.into())
    }
}

/// The desktop app's own binary next to this one, by this one's real path (links resolved): it
/// opens the window, and the login entry starts it.
fn desktop_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    let name = format!("airlock-desktop{}", std::env::consts::EXE_SUFFIX);
    Ok(exe.with_file_name(name))
}

/// The data directory's engine is another process's: asks it to show its window (a second
/// launch means the person wants to see Airlock) and says which process it is.
async fn defer_to_the_running_one(data_dir: &Path) -> String {
    // It may hold the lock and not have published its address yet (both started at once).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let found = loop {
        match discovery::find(data_dir) {
            Ok((endpoint, _)) => break Ok(endpoint),
            Err(error) if tokio::time::Instant::now() >= deadline => break Err(error),
            Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    };
    let dir = data_dir.display();
    let pid = match found {
        Ok(endpoint) => endpoint.pid,
        Err(error) => {
            return format!(
                "another Airlock already owns {dir} (its lock is held) but does not answer: {error}"
            );
        }
    };
    let shown = match ApiClient::discover(data_dir) {
        Ok(client) => client.show_window(None).await,
        Err(error) => Err(error),
    };
    match shown {
        Ok(true) => format!(
            "Airlock is already running for {dir} (process {pid}); showed its window instead"
        ),
        Ok(false) => format!(
            "`airlock serve` is already running for {dir} (process {pid}); stop it first, or use the CLI"
        ),
        Err(error) => format!(
            "Airlock is already running for {dir} (process {pid}) but did not show its window: {error}"
        ),
    }
}

/// Runs the resident until it quits; the host, whose lock is to be kept until the process ends.
async fn run(args: Args, tray: TrayStart) -> Result<Host, Refused> {
    let listen = args.host.listen();
    // Absolute: the window and the login entry start from other folders.
    let data_dir =
        std::path::absolute(resolve_data_dir(args.host.data_dir).map_err(HostError::from)?)?;
    let desktop = desktop_binary()?;
    let login_entry = LoginEntry::new(&desktop, &data_dir);
    let window_args = vec![
        "--window".to_string(),
        "--data-dir".to_string(),
        data_dir.display().to_string(),
    ];
    let made: Arc<OnceLock<Arc<Shell>>> = Arc::default();
    let slot = made.clone();
    let started = Host::start_with(
        &data_dir,
        args.host.workspace,
        listen,
        Box::new(move |engine, addr| {
            let shell = Arc::new(Shell::new(
                engine.clone(),
                addr,
                login_entry,
                Windows::new(Some((desktop.clone(), window_args))),
            ));
            let _ = slot.set(shell.clone());
            desktop_api::routes(shell)
        }),
    )
    .await;
    let (host, served) = match started {
        Err(HostError::Discovery(DiscoveryError::Locked(_))) => {
            return Err(Refused::AlreadyRunning(
                defer_to_the_running_one(&data_dir).await,
            ));
        }
        started => started?,
    };
    let shell = made
        .get()
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("the window's routes were not made"))?;
    host.engine
        .set_frontend(Arc::new(WindowFrontend(shell.clone())));

    let (quit_tx, mut quit_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    install_tray(&shell, quit_tx, tray).await;
    let follower = events::follow(shell.clone());
    let team_poller = shell.team.clone().poll();

    let stopped = tokio::select! {
        served = served => served.map_err(anyhow::Error::from),
        // Only a Quit: without a tray (no session bus) nobody can send one, and the channel's
        // end is no reason to stop.
        Some(()) = quit_rx.recv() => Ok(()),
        _ = terminated() => Ok(()),
    };
    // Open windows close with Airlock; they are told before the API stops.
    shell.windows.close_all();
    tokio::time::sleep(Duration::from_millis(200)).await;
    follower.abort();
    team_poller.abort();
    host.stop(SERVERS_STOP_WITHIN).await;
    stopped?;
    Ok(host)
}

/// The tray where the desktop has one; its clicks act through the shell.
async fn install_tray(
    shell: &Arc<Shell>,
    quit: tokio::sync::mpsc::UnboundedSender<()>,
    start: TrayStart,
) {
    use airlock_resident::tray::TrayAction;
    let (actions_tx, mut actions) = tokio::sync::mpsc::unbounded_channel::<TrayAction>();
    let on_action = move |action| {
        let _ = actions_tx.send(action);
    };
    #[cfg(target_os = "linux")]
    let spawned = {
        let () = start;
        airlock_resident::tray::Tray::spawn(shell.engine.paused(), on_action).await
    };
    #[cfg(not(target_os = "linux"))]
    let spawned = start.spawn(shell.engine.paused(), on_action).await;
    match spawned {
        Ok(tray) => {
            let _ = shell.tray.set(tray);
        }
        Err(error) => tracing::warn!("no tray icon: {error}"),
    }
    let acting = shell.clone();
    tokio::spawn(async move {
        while let Some(action) = actions.recv().await {
            match action {
                TrayAction::OpenInbox => acting.open_inbox(None),
                TrayAction::TogglePause => {
                    let engine = &acting.engine;
                    if let Err(error) = engine.set_paused(!engine.paused()) {
                        tracing::warn!("cannot switch the pause: {error}");
                    }
                }
                TrayAction::Quit => {
                    let _ = quit.send(());
                }
            }
        }
    });
}

/// Ctrl-C, or SIGTERM from the session ending.
async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let Ok(mut term) = signal(SignalKind::terminate()) {
            tokio::select! {
                _ = term.recv() => {}
                _ = tokio::signal::ctrl_c() => {}
            }
            return;
        }
    }
    let _ = tokio::signal::ctrl_c().await;
}
