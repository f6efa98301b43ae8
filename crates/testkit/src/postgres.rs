//! A throwaway PostgreSQL cluster for the tests: Debian's `postgresql` binaries (installed by
//! `scripts/setup.sh`), `initdb` into a fresh folder under the temporary directory, the server
//! listening only on a Unix socket inside it (no TCP port to collide with another test run),
//! run as `nobody` when the tests run as root (PostgreSQL refuses root). One cluster per test
//! process, started on first use; each test gets a database of its own. A watchdog (a shell
//! beside it) stops the cluster and removes its folder once the test process has exited, however
//! it ended; one whose watchdog was killed too is removed by the next run.
#![allow(clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The command that installs what is missing, named by every failure.
const INSTALL: &str =
    "run `bash scripts/setup.sh --deps-only` (or `apt-get install postgresql` on Debian/Ubuntu)";

/// The clusters' folders are named after this and the test process's pid.
const PREFIX: &str = "airlock-pg-";

/// The database user the tests connect as (trusted on the private socket).
const USER: &str = "airlock";

/// The socket's port number: the socket is `.s.PGSQL.5432` in the cluster's own folder.
const PORT: u16 = 5432;

/// A running throwaway cluster.
#[derive(Debug)]
pub struct PostgresCluster {
    bin: PathBuf,
    folder: PathBuf,
    next_database: AtomicUsize,
    /// Outlives the test process on purpose: it stops the cluster after it.
    _watchdog: Child,
}

/// The test process's cluster, started on first use. Fails (panics) with the install command
/// when PostgreSQL is not installed: a PostgreSQL test never passes without PostgreSQL.
pub fn cluster() -> &'static PostgresCluster {
    static CLUSTER: OnceLock<PostgresCluster> = OnceLock::new();
    CLUSTER.get_or_init(|| PostgresCluster::start().unwrap_or_else(|e| panic!("{e}")))
}

impl PostgresCluster {
    fn start() -> Result<Self, String> {
        let bin = binaries()?;
        remove_abandoned(&bin);
        let folder = base_folder().join(format!("{PREFIX}{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&folder);
        let socket = folder.join("socket");
        std::fs::create_dir_all(&socket).map_err(|e| format!("{}: {e}", socket.display()))?;
        if as_root() {
            // The server runs as nobody: it owns its folder.
            for path in [&folder, &socket] {
                std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY))
                    .map_err(|e| format!("chown {}: {e}", path.display()))?;
            }
        }
        let data = folder.join("data");
        run(
            &bin,
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-U".as_ref(),
                USER.as_ref(),
                "--auth=trust".as_ref(),
                "--encoding=UTF8".as_ref(),
                "--locale=C".as_ref(),
                "--no-sync".as_ref(),
            ],
        )?;
        let watchdog = watch(&bin, &folder)?;
        let options = format!(
            "-k {} -p {PORT} -c listen_addresses='' -c fsync=off -c max_connections=300",
            socket.display()
        );
        run(
            &bin,
            "pg_ctl",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-l".as_ref(),
                folder.join("server.log").as_os_str(),
                "-o".as_ref(),
                options.as_ref(),
                "-w".as_ref(),
                "-t".as_ref(),
                "120".as_ref(),
                "start".as_ref(),
            ],
        )?;
        Ok(Self {
            bin,
            folder,
            next_database: AtomicUsize::new(0),
            _watchdog: watchdog,
        })
    }

    /// The folder of the server's socket (a connection's `host`).
    pub fn socket_folder(&self) -> PathBuf {
        self.folder.join("socket")
    }

    /// A new empty database of its own, as a connection string.
    pub fn database(&self) -> String {
        let name = format!(
            "airlock_test_{}",
            self.next_database.fetch_add(1, Ordering::Relaxed)
        );
        let socket = self.socket_folder();
        run(
            &self.bin,
            "createdb",
            &[
                "-h".as_ref(),
                socket.as_os_str(),
                "-p".as_ref(),
                PORT.to_string().as_ref(),
                "-U".as_ref(),
                USER.as_ref(),
                name.as_ref(),
            ],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        self.url(&name)
    }

    /// The connection string of database `name` in this cluster.
    pub fn url(&self, name: &str) -> String {
        format!(
            "host={} port={PORT} user={USER} dbname={name}",
            self.socket_folder().display()
        )
    }
}

/// Where clusters are made: the temporary folder, or /tmp under root, whose server (nobody)
/// may not be able to reach a private TMPDIR.
fn base_folder() -> PathBuf {
    if as_root() {
        PathBuf::from("/tmp")
    } else {
        std::env::temp_dir()
    }
}

/// nobody's uid and gid on Debian.
const NOBODY: u32 = 65534;

fn as_root() -> bool {
    static ROOT: OnceLock<bool> = OnceLock::new();
    *ROOT.get_or_init(|| {
        Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
    })
}

/// How PostgreSQL's programs are started: as nobody when we are root.
fn as_server_user(bin: &Path, program: &str) -> Command {
    let path = bin.join(program);
    if as_root() {
        let mut command = Command::new("runuser");
        command.args(["-u", "nobody", "--"]).arg(path);
        command
    } else {
        Command::new(path)
    }
}

/// A shell that waits for this process to end, then stops the cluster and removes its folder.
fn watch(bin: &Path, folder: &Path) -> Result<Child, String> {
    const SCRIPT: &str = r#"
        while kill -0 "$1" 2>/dev/null; do sleep 1; done
        if [ "$4" = root ]; then
            runuser -u nobody -- "$2/pg_ctl" -D "$3/data" -m immediate -w stop
        else
            "$2/pg_ctl" -D "$3/data" -m immediate -w stop
        fi >/dev/null 2>&1
        rm -rf "$3"
    "#;
    Command::new("sh")
        .args(["-c", SCRIPT, "airlock-pg-watchdog"])
        .arg(std::process::id().to_string())
        .arg(bin)
        .arg(folder)
        .arg(if as_root() { "root" } else { "user" })
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the cluster's watchdog: {e}"))
}

/// The folder of PostgreSQL's server binaries: Debian keeps them off PATH, under
/// /usr/lib/postgresql/VERSION/bin (the newest wins); elsewhere on PATH.
fn binaries() -> Result<PathBuf, String> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("initdb").exists().then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Ok(bin);
    }
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .find(|dir| dir.join("initdb").exists() && dir.join("pg_ctl").exists())
        .ok_or_else(|| format!("PostgreSQL's server (initdb, pg_ctl) is not installed: {INSTALL}"))
}

/// Runs one of PostgreSQL's programs, as nobody when we are root.
fn run(bin: &Path, program: &str, args: &[&std::ffi::OsStr]) -> Result<(), String> {
    let path = bin.join(program);
    let mut command = if program == "createdb" {
        Command::new(&path)
    } else {
        as_server_user(bin, program)
    };
    let output = command
        .args(args)
        .current_dir("/")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}: {INSTALL}", path.display()))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{program} failed ({}): {}{}",
            output.status,
            String::from_utf8_lossy(&output.stderr),
            String::from_utf8_lossy(&output.stdout)
        ))
    }
}

/// Stops a cluster now (its server killed at once: nothing in it is kept) and removes it.
fn stop(bin: &Path, folder: &Path) {
    let data = folder.join("data");
    let _ = run(
        bin,
        "pg_ctl",
        &[
            "-D".as_ref(),
            data.as_os_str(),
            "-m".as_ref(),
            "immediate".as_ref(),
            "-w".as_ref(),
            "stop".as_ref(),
        ],
    );
    let _ = std::fs::remove_dir_all(folder);
}

/// Clusters whose test process is gone and whose watchdog did not stop them (killed with it).
fn remove_abandoned(bin: &Path) {
    let Ok(entries) = std::fs::read_dir(base_folder()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        let alive = Command::new("kill")
            .args(["-0", &pid.to_string()])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|status| status.success());
        if !alive {
            stop(bin, &entry.path());
        }
    }
}
