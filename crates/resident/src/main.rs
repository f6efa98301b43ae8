//! `airlock-resident`: what stays of the desktop app while its window is closed — the engine
//! that owns the data directory, the local API (which also serves the window's commands), the
//! tray and the notifications — without GTK or WebKit, so that it stays small. The desktop app
//! (`airlock-desktop`) starts it, then opens its window as a separate process.

use airlock_api::host::{Host, HostArgs, log_to_stderr, resolve_data_dir};
use airlock_resident::autostart::LoginEntry;
use airlock_resident::shell::Shell;
use airlock_resident::window::{self, WindowFrontend, Windows};
use airlock_resident::{desktop_api, events};
use clap::Parser;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

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

/// Runs the resident until it quits; its exit code.
fn serve(args: Args, tray: TrayStart) -> i32 {
    // Two worker threads are plenty for one person's inbox and keep the process small.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build();
    let result = match runtime {
        Ok(runtime) => runtime.block_on(run(args, tray)),
        Err(error) => Err(error.into()),
    };
    match result {
        Ok(()) => 0,
        Err(error) => {
            eprintln!("airlock-resident: {error:#}");
            1
        }
    }
}

/// The desktop app's own binary, next to this one: it opens the window.
fn desktop_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    let name = format!("airlock-desktop{}", std::env::consts::EXE_SUFFIX);
    Ok(exe.with_file_name(name))
}

async fn run(args: Args, tray: TrayStart) -> anyhow::Result<()> {
    let listen = args.host.listen();
    let data_dir = resolve_data_dir(args.host.data_dir)?;
    let desktop = desktop_binary()?;
    let window_args = vec![
        "--window".to_string(),
        "--data-dir".to_string(),
        data_dir.display().to_string(),
    ];
    let made: Arc<OnceLock<Arc<Shell>>> = Arc::default();
    let slot = made.clone();
    let (host, served) = Host::start_with(
        &data_dir,
        args.host.workspace,
        listen,
        Box::new(move |engine, addr| {
            let shell = Arc::new(Shell::new(
                engine.clone(),
                addr,
                LoginEntry::new(&desktop),
                Windows::new(Some((desktop.clone(), window_args))),
            ));
            let _ = slot.set(shell.clone());
            desktop_api::routes(shell)
        }),
    )
    .await?;
    let shell = made
        .get()
        .cloned()
        .ok_or_else(|| anyhow::anyhow!("the window's routes were not made"))?;
    host.engine
        .set_frontend(Arc::new(WindowFrontend(shell.clone())));

    let (quit_tx, mut quit_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    install_tray(&shell, quit_tx, tray).await;
    let follower = events::follow(shell.clone());

    let stopped = tokio::select! {
        served = served => served.map_err(anyhow::Error::from),
        _ = quit_rx.recv() => Ok(()),
        _ = terminated() => Ok(()),
    };
    // Open windows close with Airlock; they are told before the API stops.
    shell.windows.close_all();
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    follower.abort();
    drop(host);
    stopped
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
                TrayAction::OpenInbox => window::open_inbox(&acting, None),
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
