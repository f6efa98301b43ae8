//! Claude Desktop: its servers would each run through `airlock mcp-proxy --name NAME -- COMMAND
//! ARGS…`; until that proxy exists `connect` refuses. `status` and `disconnect` recognise (and
//! undo) such a rewrite.

use crate::files::read_object;
use crate::hooks::finish;
use crate::{ConnectError, ConnectReport, Options, Result};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

pub fn config_path() -> Result<PathBuf> {
    let base = if cfg!(target_os = "linux") {
        dirs::config_dir()
    } else {
        // macOS: ~/Library/Application Support; Windows: %APPDATA%.
        dirs::config_dir().or_else(dirs::data_dir)
    }
    .ok_or_else(|| ConnectError::Invalid("no config folder is known for this user".into()))?;
    Ok(base.join("Claude").join("claude_desktop_config.json"))
}

/// The proxied command's words, when this entry runs through `airlock mcp-proxy`.
fn proxied(entry: &Value) -> Option<(String, Vec<Value>)> {
    let command = entry.get("command")?.as_str()?;
    let args = entry.get("args")?.as_array()?;
    if !command.contains("airlock") || !args.iter().any(|a| a == "mcp-proxy") {
        return None;
    }
    let split = args.iter().position(|a| a == "--")?;
    let original = args.get(split + 1)?.as_str()?.to_string();
    Some((original, args[split + 2..].to_vec()))
}

fn servers<'a>(
    config: &'a mut Value,
    path: &Path,
) -> Result<Option<&'a mut serde_json::Map<String, Value>>> {
    match config.get_mut("mcpServers") {
        None => Ok(None),
        Some(Value::Object(map)) => Ok(Some(map)),
        Some(_) => Err(ConnectError::Unparsable {
            path: path.into(),
            message: "\"mcpServers\" is not an object".into(),
        }),
    }
}

/// Not yet: the rewrite needs `airlock mcp-proxy`, which this build does not have. Refused
/// rather than pointing Claude Desktop's servers at a command that does not exist.
pub fn connect(path: &Path, _options: &Options) -> Result<ConnectReport> {
    Err(ConnectError::Invalid(format!(
        "connecting Claude Desktop needs `airlock mcp-proxy`, which this version of Airlock does not have yet; {} was not changed",
        path.display()
    )))
}

pub fn disconnect(path: &Path) -> Result<ConnectReport> {
    if !path.exists() {
        return finish(path, "claude-desktop", &json!({}), &json!({}), Vec::new());
    }
    let before = read_object(path)?;
    let mut after = before.clone();
    let mut changes = Vec::new();
    if let Some(servers) = servers(&mut after, path)? {
        for (name, entry) in servers.iter_mut() {
            if let Some((command, args)) = proxied(entry) {
                changes.push(format!("~ {name}: runs {command} directly again"));
                entry["command"] = json!(command);
                entry["args"] = Value::Array(args);
            }
        }
    }
    finish(path, "claude-desktop", &before, &after, changes)
}

pub fn connected(path: &Path) -> Result<bool> {
    let config = read_object(path)?;
    Ok(config
        .get("mcpServers")
        .and_then(Value::as_object)
        .is_some_and(|servers| servers.values().any(|e| proxied(e).is_some())))
}
