//! Codex: Airlock's hook in `CODEX_HOME/hooks.json` (PreToolUse, and PermissionRequest so an
//! approval given at PreToolUse is not asked for again), and its trust in `config.toml` — Codex
//! skips an untrusted hook silently, so a hook without its trust would gate nothing.

use crate::hooks;
use crate::{ConnectError, ConnectReport, Options, Result};
use std::path::{Path, PathBuf};

const EVENTS: [&str; 2] = ["PreToolUse", "PermissionRequest"];

/// `$CODEX_HOME`, else `~/.codex`.
pub fn home() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os("CODEX_HOME").filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    dirs::home_dir()
        .map(|h| h.join(".codex"))
        .ok_or_else(|| ConnectError::Invalid("no home folder is set ($HOME)".into()))
}

pub fn connect(path: &Path, options: &Options) -> Result<ConnectReport> {
    let stale = hooks::our_keys(path, "codex")?;
    let mut report = hooks::connect(path, "codex", &EVENTS, options)?;
    let fresh = hooks::our_keys(path, "codex")?;
    let gone: Vec<String> = stale.into_iter().filter(|k| !fresh.contains(k)).collect();
    let mut trusted = crate::codex_trust::forget(path, &gone)?;
    trusted.extend(crate::codex_trust::trust(
        path,
        "codex",
        options.codex.as_deref(),
    )?);
    report.changes.extend(trusted.iter().cloned());
    report.changed |= !trusted.is_empty();
    Ok(report)
}

pub fn disconnect(path: &Path) -> Result<ConnectReport> {
    let keys = hooks::our_keys(path, "codex")?;
    let mut report = hooks::disconnect(path, "codex")?;
    let forgotten = crate::codex_trust::forget(path, &keys)?;
    report.changes.extend(forgotten.iter().cloned());
    report.changed |= !forgotten.is_empty();
    Ok(report)
}
