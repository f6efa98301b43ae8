//! Claude Desktop: each stdio server in `mcpServers` is rewritten to run through
//! `airlock mcp-proxy --name NAME -- COMMAND ARGS…` (its environment kept), and each remote one
//! (`url`, streamable HTTP) through `airlock mcp-proxy --name NAME --url URL` (its headers in the
//! proxy's environment, not on its command line; the proxy signs in when the server asks), so
//! every tool call Claude Desktop makes waits for Airlock; `disconnect` puts the originals back.
//! A server of another transport (`"type": "sse"`) is left as it is (and said so).

use crate::Agent;

/// Claude Desktop: no hook; its MCP servers' calls reach Airlock through `airlock mcp-proxy`,
/// as [`airlock_core::MCP_CLIENT`] (so no person's fallback: no decision is a denial).
#[derive(Debug, Clone, Copy)]
pub struct ClaudeDesktop;

impl Agent for ClaudeDesktop {
    fn name(&self) -> &'static str {
        "claude-desktop"
    }

    fn display_name(&self) -> &'static str {
        "Claude Desktop"
    }

    fn asks_as(&self) -> &'static str {
        airlock_core::MCP_CLIENT
    }
}

/// The config writer: each command server of `mcpServers` through `airlock mcp-proxy`.
#[cfg(feature = "connect")]
mod config {
    use super::ClaudeDesktop;
    use crate::connect::files::read_object;
    use crate::connect::hooks::finish;
    use crate::connect::{ConfigWriter, ConnectError, ConnectReport, Options, Result};
    use serde_json::{Value, json};
    use std::path::{Path, PathBuf};

    impl crate::connect::Connectable for ClaudeDesktop {
        const WRITER: Option<&'static dyn ConfigWriter> = Some(&ClaudeDesktop);
    }

    impl ConfigWriter for ClaudeDesktop {
        fn config_path(&self, _project: Option<&Path>) -> Result<PathBuf> {
            config_path()
        }

        fn connect(&self, path: &Path, options: &Options) -> Result<ConnectReport> {
            connect(path, options)
        }

        fn disconnect(&self, path: &Path) -> Result<ConnectReport> {
            disconnect(path)
        }

        fn connected(&self, path: &Path) -> Result<bool> {
            connected(path)
        }

        fn connected_note(&self, report: &ConnectReport) -> Option<&'static str> {
            report.changed.then_some(
                "Restart Claude Desktop: its servers' tool calls then wait in Airlock's inbox. When Airlock is not running they are denied, never run; undo with `airlock disconnect claude-desktop`.",
            )
        }
    }

    fn config_path() -> Result<PathBuf> {
        let base = if cfg!(target_os = "linux") {
            dirs::config_dir()
        } else {
            // macOS: ~/Library/Application Support; Windows: %APPDATA%.
            dirs::config_dir().or_else(dirs::data_dir)
        }
        .ok_or_else(|| ConnectError::Invalid("no config folder is known for this user".into()))?;
        Ok(base.join("Claude").join("claude_desktop_config.json"))
    }

    /// The arguments of an entry that runs through `airlock mcp-proxy`.
    fn proxy_args(entry: &Value) -> Option<&Vec<Value>> {
        let command = entry.get("command")?.as_str()?;
        let args = entry.get("args")?.as_array()?;
        (command.contains("airlock") && args.iter().any(|a| a == "mcp-proxy")).then_some(args)
    }

    /// The proxied command's words, when this entry runs a command through `airlock mcp-proxy`.
    fn proxied(entry: &Value) -> Option<(String, Vec<Value>)> {
        let args = proxy_args(entry)?;
        let split = args.iter().position(|a| a == "--")?;
        let original = args.get(split + 1)?.as_str()?.to_string();
        Some((original, args[split + 2..].to_vec()))
    }

    /// The original remote entry, when this one proxies a URL (`mcp-proxy --url URL`).
    fn proxied_url(entry: &Value) -> Option<Value> {
        let args = proxy_args(entry)?;
        let at = args.iter().position(|a| a == "--url")?;
        let url = args.get(at + 1)?.as_str()?;
        let mut original = json!({"type": "http", "url": url});
        let headers = entry
            .get("env")
            .and_then(|env| env.get(airlock_core::PROXY_HEADERS_ENV))
            .and_then(Value::as_str)
            .and_then(|json| serde_json::from_str::<Value>(json).ok());
        if let Some(headers) = headers {
            original["headers"] = headers;
        }
        Some(original)
    }

    /// A remote entry the proxy can take (streamable HTTP): its URL and headers.
    fn remote(entry: &Value) -> Option<(String, Option<Value>)> {
        let url = entry.get("url")?.as_str()?;
        let transport = entry.get("type").and_then(Value::as_str).unwrap_or("http");
        if !matches!(transport, "http" | "streamable-http" | "streamableHttp") {
            return None;
        }
        let headers = entry
            .get("headers")
            .filter(|h| h.as_object().is_some_and(|h| !h.is_empty()))
            .cloned();
        Some((url.to_string(), headers))
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

    /// The name Airlock knows a Claude Desktop server by: its own where Airlock accepts it, else
    /// the nearest that is (letters, digits, `-`, `_`; not an agent's or the built-in server's).
    fn airlock_name(name: &str, taken: &[String]) -> String {
        let mut clean: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '-'
                }
            })
            .take(56)
            .collect();
        if clean.trim_matches('-').is_empty() {
            clean = "server".into();
        }
        if airlock_core::validate_proxied_server_name(&clean).is_err() {
            clean = format!("desktop-{clean}");
        }
        let mut unique = clean.clone();
        let mut n = 2;
        while taken.contains(&unique) {
            unique = format!("{clean}-{n}");
            n += 1;
        }
        unique
    }

    fn connect(path: &Path, options: &Options) -> Result<ConnectReport> {
        let before = read_object(path)?;
        let mut after = before.clone();
        let mut changes = Vec::new();
        if let Some(servers) = servers(&mut after, path)? {
            let mut names: Vec<String> = Vec::new();
            for (name, entry) in servers.iter_mut() {
                if proxy_args(entry).is_some() {
                    continue;
                }
                if let Some((url, headers)) = remote(entry) {
                    let known_as = airlock_name(name, &names);
                    names.push(known_as.clone());
                    let words: Vec<Value> = options
                        .airlock_words(&["mcp-proxy", "--name", &known_as, "--url", &url])
                        .into_iter()
                        .skip(1)
                        .map(Value::String)
                        .collect();
                    let mut proxied = json!({
                        "command": options.airlock.display().to_string(),
                        "args": words,
                    });
                    if let Some(headers) = headers {
                        let mut env = serde_json::Map::new();
                        env.insert(
                            airlock_core::PROXY_HEADERS_ENV.into(),
                            Value::String(headers.to_string()),
                        );
                        proxied["env"] = Value::Object(env);
                    }
                    *entry = proxied;
                    changes.push(format!(
                        "~ {name}: {url} now runs through airlock mcp-proxy (known in Airlock as {known_as}; it signs in when the server asks)"
                    ));
                    continue;
                }
                let Some(command) = entry
                    .get("command")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                else {
                    changes.push(format!(
                        "  {name}: neither a command nor a streamable-HTTP URL; left as it is"
                    ));
                    continue;
                };
                let Some(args) = entry
                    .get("args")
                    .map_or(Some(Vec::new()), |a| a.as_array().cloned())
                else {
                    return Err(ConnectError::Unparsable {
                        path: path.into(),
                        message: format!("the \"args\" of server '{name}' is not a list"),
                    });
                };
                let known_as = airlock_name(name, &names);
                names.push(known_as.clone());
                let mut words: Vec<Value> = options
                    .airlock_words(&["mcp-proxy", "--name", &known_as, "--", &command])
                    .into_iter()
                    .skip(1)
                    .map(Value::String)
                    .collect();
                words.extend(args);
                entry["command"] = json!(options.airlock.display().to_string());
                entry["args"] = Value::Array(words);
                changes.push(if known_as == *name {
                    format!("~ {name}: {command} now runs through airlock mcp-proxy")
                } else {
                    format!(
                        "~ {name}: {command} now runs through airlock mcp-proxy (known in Airlock as {known_as})"
                    )
                });
            }
        }
        if changes.is_empty() {
            changes.push("no MCP servers to route through Airlock".into());
        }
        finish(path, "claude-desktop", &before, &after, changes)
    }

    fn disconnect(path: &Path) -> Result<ConnectReport> {
        if !path.exists() {
            return finish(path, "claude-desktop", &json!({}), &json!({}), Vec::new());
        }
        let before = read_object(path)?;
        let mut after = before.clone();
        let mut changes = Vec::new();
        if let Some(servers) = servers(&mut after, path)? {
            for (name, entry) in servers.iter_mut() {
                if let Some(original) = proxied_url(entry) {
                    changes.push(format!("~ {name}: connects to its URL directly again"));
                    *entry = original;
                } else if let Some((command, args)) = proxied(entry) {
                    changes.push(format!("~ {name}: runs {command} directly again"));
                    entry["command"] = json!(command);
                    entry["args"] = Value::Array(args);
                }
            }
        }
        finish(path, "claude-desktop", &before, &after, changes)
    }

    fn connected(path: &Path) -> Result<bool> {
        let config = read_object(path)?;
        Ok(config
            .get("mcpServers")
            .and_then(Value::as_object)
            .is_some_and(|servers| servers.values().any(|e| proxy_args(e).is_some())))
    }

    #[cfg(test)]
    mod tests {
        #![allow(clippy::unwrap_used)]
        use super::*;

        fn options() -> Options {
            Options {
                airlock: PathBuf::from("/opt/airlock/airlock"),
                data_dir: Some(PathBuf::from("/data/air lock")),
                timeout_secs: 30,
                codex: None,
            }
        }

        #[test]
        fn each_command_server_runs_through_the_proxy_and_disconnect_restores_it() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("claude_desktop_config.json");
            let theirs = json!({
                "globalShortcut": "Ctrl+Space",
                "mcpServers": {
                    "files": {"command": "npx", "args": ["-y", "server-filesystem", "/home/me"], "env": {"TOKEN": "t"}},
                    "my notes!": {"command": "notes-server"},
                    "remote": {"url": "https://example.com/mcp"},
                    "linear": {"type": "http", "url": "https://mcp.linear.app/mcp", "headers": {"Authorization": "Bearer lin_secret"}},
                    "old": {"type": "sse", "url": "https://example.com/sse"},
                },
            });
            std::fs::write(&path, theirs.to_string()).unwrap();
            let report = connect(&path, &options()).unwrap();
            assert!(report.changed && report.backup.is_some(), "{report:?}");
            let now: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            assert_eq!(now["globalShortcut"], "Ctrl+Space");
            assert_eq!(
                now["mcpServers"]["files"]["command"],
                "/opt/airlock/airlock"
            );
            assert_eq!(
                now["mcpServers"]["files"]["args"],
                json!([
                    "--data-dir",
                    "/data/air lock",
                    "mcp-proxy",
                    "--name",
                    "files",
                    "--",
                    "npx",
                    "-y",
                    "server-filesystem",
                    "/home/me"
                ])
            );
            assert_eq!(now["mcpServers"]["files"]["env"], json!({"TOKEN": "t"}));
            assert_eq!(
                now["mcpServers"]["my notes!"]["args"],
                json!([
                    "--data-dir",
                    "/data/air lock",
                    "mcp-proxy",
                    "--name",
                    "my-notes-",
                    "--",
                    "notes-server"
                ])
            );
            // Issue 30: a remote server was left as it was, its calls never reaching Airlock.
            assert_eq!(
                now["mcpServers"]["remote"],
                json!({"command": "/opt/airlock/airlock", "args": [
                    "--data-dir", "/data/air lock", "mcp-proxy", "--name", "remote",
                    "--url", "https://example.com/mcp",
                ]})
            );
            // Its headers (a token) go in the proxy's environment, never on its command line.
            let linear = &now["mcpServers"]["linear"];
            assert!(
                !linear["args"].to_string().contains("lin_secret"),
                "{linear}"
            );
            let headers: Value = serde_json::from_str(
                linear["env"][airlock_core::PROXY_HEADERS_ENV]
                    .as_str()
                    .unwrap(),
            )
            .unwrap();
            assert_eq!(headers, json!({"Authorization": "Bearer lin_secret"}));
            // SSE is not what the proxy speaks: left as it is.
            assert_eq!(now["mcpServers"]["old"], theirs["mcpServers"]["old"]);
            assert!(
                report
                    .changes
                    .iter()
                    .any(|c| c.contains("known in Airlock as my-notes-"))
            );
            assert!(connected(&path).unwrap());

            let again = connect(&path, &options()).unwrap();
            assert!(
                !again.changed,
                "connecting twice changes nothing: {again:?}"
            );

            let undone = disconnect(&path).unwrap();
            assert!(undone.changed);
            let restored: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            assert_eq!(
                restored["mcpServers"]["files"],
                theirs["mcpServers"]["files"]
            );
            assert_eq!(
                restored["mcpServers"]["my notes!"],
                json!({"command": "notes-server", "args": []})
            );
            assert_eq!(
                restored["mcpServers"]["remote"],
                json!({"type": "http", "url": "https://example.com/mcp"})
            );
            assert_eq!(
                restored["mcpServers"]["linear"],
                theirs["mcpServers"]["linear"]
            );
            assert!(!connected(&path).unwrap());
        }

        #[test]
        fn names_airlock_would_refuse_are_changed() {
            assert_eq!(airlock_name("github", &[]), "github");
            assert_eq!(airlock_name("codex", &[]), "desktop-codex");
            assert_eq!(airlock_name("builtin", &[]), "desktop-builtin");
            assert_eq!(airlock_name("???", &[]), "server");
            assert_eq!(airlock_name("a b", &["a-b".into()]), "a-b-2");
            assert!(airlock_name(&"x".repeat(200), &[]).len() <= 64);
        }

        #[test]
        fn a_file_it_cannot_read_is_left_alone() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("claude_desktop_config.json");
            std::fs::write(&path, "{\"mcpServers\": [1, 2]}").unwrap();
            assert!(connect(&path, &options()).is_err());
            std::fs::write(&path, "{ not json").unwrap();
            assert!(connect(&path, &options()).is_err());
            assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
        }
    }
}
