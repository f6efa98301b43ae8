//! Disk faults injected into a running process with strace (`-e inject=CALL:error=ERRNO`): the
//! engine's syscalls fail as a dying or full disk would make them fail, in its own process.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Which system calls fail, and with which errno.
#[derive(Debug, Clone, Copy)]
pub struct Fault {
    pub calls: &'static str,
    pub errno: &'static str,
}

/// The disk's sync fails (a dying disk, a pulled USB stick).
pub const SYNC_FAILS: Fault = Fault {
    calls: "fdatasync",
    errno: "EIO",
};

/// The disk is full: SQLite's writes (pwrite64) and syncs fail.
pub const DISK_FULL: Fault = Fault {
    calls: "pwrite64,fdatasync",
    errno: "ENOSPC",
};

/// Fails the test when strace is missing, with the command that installs it: a storage test
/// never passes without injecting its fault.
pub fn require_strace() {
    let installed = Command::new("strace")
        .arg("-V")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        installed,
        "strace is missing: run `bash scripts/setup.sh --deps-only` (or `apt-get install strace`)"
    );
}

/// The tracer injecting a fault; the fault ends when it is dropped.
pub struct Injected(Child);

impl Drop for Injected {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Traces every thread of `pid` with each of the fault's calls failing, and returns once the
/// tracer is attached. Panics (this is a test harness) when strace cannot start or attach.
pub fn inject(pid: u32, fault: Fault) -> Injected {
    require_strace();
    let mut strace = Command::new("strace");
    strace.args(["-f", "-qq", "-o", "/dev/null", "-e"]);
    strace.arg(format!("trace={}", fault.calls));
    strace.arg("-e");
    strace.arg(format!("inject={}:error={}", fault.calls, fault.errno));
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap_or_else(|e| panic!("no process {pid}: {e}"));
    for task in tasks.flatten() {
        strace.arg("-p").arg(task.file_name());
    }
    let tracer = Injected(
        strace
            .stdin(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start strace: {e}")),
    );
    // Attached once every thread reports its tracer.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !every_thread_traced(pid) {
        assert!(Instant::now() < deadline, "strace never attached to {pid}");
        std::thread::sleep(Duration::from_millis(20));
    }
    tracer
}

/// Whether each thread of `pid` has a tracer.
fn every_thread_traced(pid: u32) -> bool {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().all(|task| {
        std::fs::read_to_string(task.path().join("status"))
            .ok()
            .and_then(|status| {
                status
                    .lines()
                    .find(|l| l.starts_with("TracerPid:"))
                    .map(|l| l.split_whitespace().nth(1) != Some("0"))
            })
            .unwrap_or(false)
    })
}
