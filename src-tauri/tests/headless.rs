//! The desktop app started where there is no display: one clear line, a non-zero exit, no
//! panic (security and crash-safety finding 10: it used to panic with a backtrace).

// Only where a window needs DISPLAY or WAYLAND_DISPLAY (Linux and the other Unix-likes): on
// macOS and Windows the app would open its window and this test would wait for it forever.
#![cfg(all(unix, not(target_os = "macos")))]

use std::process::Command;

#[test]
fn without_a_display_it_says_what_is_missing_and_how_to_run_headless() {
    let data = tempfile::tempdir().expect("a temporary folder");
    let out = Command::new(env!("CARGO_BIN_EXE_airlock-desktop"))
        .arg("--data-dir")
        .arg(data.path())
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("the app starts");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("no display") && stderr.contains("airlock serve"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    // Nothing was started: no engine owns the data directory.
    assert!(!data.path().join("api.json").exists());
}
