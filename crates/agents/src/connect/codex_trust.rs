//! Codex's hook trust. Codex skips a hook it has not been told to trust, silently; trust is
//! recorded in `CODEX_HOME/config.toml` as `[hooks.state."<hooks.json>:<event>:<group>:<handler>"]
//! trusted_hash = "sha256:…"`, where the hash is the one Codex itself reports for the hook
//! (`codex app-server`, method `hooks/list`, `currentHash`). Airlock asks Codex rather than
//! recomputing the hash, so a change in how Codex hashes cannot make it trust the wrong thing.

use crate::connect::{ConnectError, Result};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use toml_edit::{DocumentMut, Item, Table, value};

/// How long Codex may take to list its hooks.
const LIST_TIMEOUT: Duration = Duration::from_secs(20);

fn config_path(hooks_json: &Path) -> PathBuf {
    hooks_json.with_file_name("config.toml")
}

fn read_config(path: &Path) -> Result<DocumentMut> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(error) => {
            return Err(ConnectError::Read {
                path: path.into(),
                message: error.to_string(),
            });
        }
    };
    text.parse::<DocumentMut>()
        .map_err(|e| ConnectError::Unparsable {
            path: path.into(),
            message: e.to_string(),
        })
}

/// `codex` on PATH, unless given.
pub fn find_codex(given: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = given {
        return Some(path.to_path_buf());
    }
    let name = if cfg!(windows) { "codex.cmd" } else { "codex" };
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
    })
}

/// The hooks Codex sees, by key, with their current hash: `(key, command, hash)`.
fn list_hooks(
    codex: &Path,
    codex_home: &Path,
) -> std::result::Result<Vec<(String, String, String)>, String> {
    let mut child = Command::new(codex)
        .arg("app-server")
        .env("CODEX_HOME", codex_home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot run {}: {e}", codex.display()))?;
    let requests = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
               "params": {"clientInfo": {"name": "airlock", "version": env!("CARGO_PKG_VERSION")}}}),
        json!({"jsonrpc": "2.0", "method": "initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "hooks/list", "params": {}}),
    ];
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    for request in &requests {
        writeln!(stdin, "{request}").map_err(|e| e.to_string())?;
    }
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(message) = serde_json::from_str::<Value>(&line)
                && message.get("id") == Some(&json!(2))
            {
                let _ = sender.send(message);
                break;
            }
        }
    });
    let started = Instant::now();
    let answer = receiver.recv_timeout(LIST_TIMEOUT.saturating_sub(started.elapsed()));
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    let answer = answer.map_err(|_| "Codex did not list its hooks in time".to_string())?;
    if let Some(error) = answer.get("error") {
        return Err(format!("Codex refused to list its hooks: {error}"));
    }
    let mut hooks = Vec::new();
    for group in answer["result"]["data"].as_array().into_iter().flatten() {
        for hook in group["hooks"].as_array().into_iter().flatten() {
            if let (Some(key), Some(command), Some(hash)) = (
                hook["key"].as_str(),
                hook["command"].as_str(),
                hook["currentHash"].as_str(),
            ) {
                hooks.push((key.to_string(), command.to_string(), hash.to_string()));
            }
        }
    }
    Ok(hooks)
}

fn state_table(document: &mut DocumentMut) -> Option<&mut Table> {
    let hooks = document
        .entry("hooks")
        .or_insert_with(|| {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_mut()?;
    hooks
        .entry("state")
        .or_insert_with(|| {
            let mut table = Table::new();
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_mut()
}

fn write_config(path: &Path, document: &DocumentMut) -> Result<()> {
    crate::connect::files::write_with_backup(path, &document.to_string()).map(|_| ())
}

/// Records Codex's trust of Airlock's hooks in `hooks_json`. Returns one line per change, or
/// what the person must do when Codex cannot be asked.
pub fn trust(hooks_json: &Path, agent: &str, codex: Option<&Path>) -> Result<Vec<String>> {
    let Some(codex) = find_codex(codex) else {
        return Ok(vec![format!(
            "! Codex skips hooks it does not trust, and no `codex` was found to ask for the hook's hash: trust it in Codex (/hooks), or run `airlock connect {agent} --codex PATH`"
        )]);
    };
    let codex_home = hooks_json.parent().unwrap_or(Path::new("."));
    let hooks = list_hooks(&codex, codex_home).map_err(ConnectError::Invalid)?;
    let source = std::path::absolute(hooks_json).unwrap_or_else(|_| hooks_json.to_path_buf());
    let ours: Vec<&(String, String, String)> = hooks
        .iter()
        .filter(|(key, command, _)| {
            key.starts_with(&format!("{}:", source.display()))
                && crate::connect::hooks::is_our_command(command, agent)
        })
        .collect();
    if ours.is_empty() {
        return Err(ConnectError::Invalid(format!(
            "Codex does not list Airlock's hook from {}; it was not trusted",
            source.display()
        )));
    }
    let path = config_path(hooks_json);
    let mut document = read_config(&path)?;
    let state = state_table(&mut document).ok_or_else(|| ConnectError::Unparsable {
        path: path.clone(),
        message: "[hooks] or [hooks.state] is not a table".into(),
    })?;
    let mut changes = Vec::new();
    for (key, _, hash) in ours {
        let current = state
            .get(key)
            .and_then(|entry| entry.get("trusted_hash"))
            .and_then(|h| h.as_str());
        if current == Some(hash.as_str()) {
            continue;
        }
        let mut entry = Table::new();
        entry["trusted_hash"] = value(hash.as_str());
        state.insert(key, Item::Table(entry));
        changes.push(format!("+ trusted in {}: {key}", path.display()));
    }
    if !changes.is_empty() {
        write_config(&path, &document)?;
    }
    Ok(changes)
}

/// Forgets the trust of these hook keys (Airlock's, before they are removed).
pub fn forget(hooks_json: &Path, keys: &[String]) -> Result<Vec<String>> {
    let path = config_path(hooks_json);
    if keys.is_empty() || !path.exists() {
        return Ok(Vec::new());
    }
    let mut document = read_config(&path)?;
    let mut changes = Vec::new();
    if let Some(state) = document
        .get_mut("hooks")
        .and_then(|h| h.as_table_mut())
        .and_then(|h| h.get_mut("state"))
        .and_then(|s| s.as_table_mut())
    {
        for key in keys {
            if state.remove(key).is_some() {
                changes.push(format!("- trust in {}: {key}", path.display()));
            }
        }
    }
    if !changes.is_empty() {
        write_config(&path, &document)?;
    }
    Ok(changes)
}
