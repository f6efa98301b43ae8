//! Starting the desktop app: one resident process per data directory (`airlock-resident`: the
//! engine, the local API, the tray), started here when none runs, and a window. A second launch
//! asks the running resident to show its window.

use airlock_client::ApiClient;
use airlock_client::discovery;
use airlock_client::program::{ALREADY_RUNNING_EXIT, HostArgs};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a starting resident may take to answer (it opens the database and binds the API).
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// What the launch found.
pub enum Resident {
    /// Started by this launch: the window is this process's to open.
    Started,
    /// Already running: asked to show its window.
    AlreadyRunning,
}

pub struct ResidentOptions<'a> {
    /// The data directory, resolved.
    pub data_dir: &'a Path,
    pub host: &'a HostArgs,
    pub show_window: bool,
}

/// Makes sure the data directory's resident runs; when it already did and a window is wanted,
/// asks it to show its window.
pub fn ensure_resident(options: &ResidentOptions<'_>) -> anyhow::Result<Resident> {
    if discovery::engine_lock_held(options.data_dir) {
        if options.show_window {
            show_running_app(options.data_dir)?;
        }
        return Ok(Resident::AlreadyRunning);
    }
    let mut child = spawn(options)?;
    wait_until_answering(options.data_dir, &mut child)
}

/// `airlock-resident`, next to this binary.
fn resident_binary() -> anyhow::Result<PathBuf> {
    let exe = std::env::current_exe()?;
    Ok(exe.with_file_name(format!("airlock-resident{}", std::env::consts::EXE_SUFFIX)))
}

fn spawn(options: &ResidentOptions<'_>) -> anyhow::Result<Child> {
    let program = resident_binary()?;
    let mut command = Command::new(&program);
    command
        .arg("--data-dir")
        .arg(options.data_dir)
        .arg("--api-port")
        .arg(options.host.api_port.to_string())
        .stdin(Stdio::null());
    if let Some(workspace) = &options.host.workspace {
        command.arg("--workspace").arg(workspace);
    }
    // A WebDriver session drives this process's window only: the windows the resident starts
    // later must not wait for an automation session (nor take its inspector port).
    for automation in [
        "TAURI_AUTOMATION",
        "TAURI_WEBVIEW_AUTOMATION",
        "WEBKIT_INSPECTOR_SERVER",
    ] {
        command.env_remove(automation);
    }
    // Its own process group: a Ctrl-C meant for the window (or its terminal) leaves Airlock
    // running in the tray.
    #[cfg(unix)]
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    command.spawn().map_err(|error| {
        anyhow::anyhow!(
            "cannot start Airlock's engine {}: {error} (it ships beside airlock-desktop; \
                 from a source tree: cargo build -p airlock-resident)",
            program.display()
        )
    })
}

/// Waits for the resident just started to answer. When another one took the data directory
/// first (two launches at once), the new one showed that one's window and stepped back.
fn wait_until_answering(data_dir: &Path, child: &mut Child) -> anyhow::Result<Resident> {
    let started = Instant::now();
    while started.elapsed() < START_TIMEOUT {
        if let Some(status) = child.try_wait()? {
            if status.code() == Some(i32::from(ALREADY_RUNNING_EXIT)) {
                return Ok(Resident::AlreadyRunning);
            }
            anyhow::bail!("Airlock's engine stopped as it started ({status}); see the lines above");
        }
        // Found only once its lock is held and its pid alive: this child, not a dead one's
        // leftover api.json.
        if let Ok((endpoint, _)) = discovery::find(data_dir)
            && endpoint.pid == child.id()
        {
            return Ok(Resident::Started);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    anyhow::bail!(
        "Airlock's engine did not start within {} s",
        START_TIMEOUT.as_secs()
    )
}

/// One instance per data directory: a second launch brings the running app's window forward.
fn show_running_app(dir: &Path) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let shown = runtime.block_on(async { ApiClient::discover(dir)?.show_window(None).await });
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

#[cfg(all(test, unix))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Two launches at once: the resident that lost the race showed the winner's window and
    /// exited with [`ALREADY_RUNNING_EXIT`]; this launch is done, with no error and no window of
    /// its own. Any other early exit is still an error.
    #[test]
    fn a_resident_that_found_another_running_means_already_running() {
        let data = tempfile::tempdir().unwrap();
        let exited = |code: u8| {
            Command::new("sh")
                .arg("-c")
                .arg(format!("exit {code}"))
                .spawn()
                .unwrap()
        };
        let stepped_back = wait_until_answering(data.path(), &mut exited(ALREADY_RUNNING_EXIT));
        assert!(matches!(stepped_back, Ok(Resident::AlreadyRunning)));
        let failed = wait_until_answering(data.path(), &mut exited(1));
        assert!(failed.is_err());
    }
}
