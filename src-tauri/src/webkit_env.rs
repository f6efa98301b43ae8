//! WebKitGTK options that exist only as environment variables, read when GTK starts.
//!
//! The DMABUF renderer is off by default: measured under Xvfb (BENCHMARKS.md) it costs ~60 MB in
//! the web process and ~0.3 s of cold start, and it is the renderer behind the blank windows some
//! GPUs show. Setting the variable yourself (to `0` to keep the renderer) wins. The variable is
//! given by re-executing the binary, since changing our own environment while threads may run is
//! unsound (and this crate forbids `unsafe`).

#[cfg(target_os = "linux")]
pub fn apply_defaults() {
    use std::os::unix::process::CommandExt;
    const DMABUF: &str = "WEBKIT_DISABLE_DMABUF_RENDERER";
    if std::env::var_os(DMABUF).is_some() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    // `exec` returns only when it failed; then the app goes on with WebKit's defaults.
    let error = std::process::Command::new(exe)
        .args(std::env::args_os().skip(1))
        .env(DMABUF, "1")
        .exec();
    eprintln!("airlock-desktop: cannot restart with {DMABUF}=1 ({error}); going on without it");
}

#[cfg(not(target_os = "linux"))]
pub fn apply_defaults() {}
