//! An MCP server's definition as the person gave it: a stdio command or a streamable-HTTP URL,
//! the Claude Desktop `mcpServers` form it may be imported from, and the hash the rug-pull guard
//! pins.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ServerConfig {
    /// A local process speaking MCP on stdin/stdout; its stderr goes to a per-server log.
    Stdio {
        command: String,
        #[serde(default)]
        args: Vec<String>,
        #[serde(default)]
        env: BTreeMap<String, String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cwd: Option<String>,
    },
    /// A streamable-HTTP endpoint.
    Http {
        url: String,
        #[serde(default)]
        headers: BTreeMap<String, String>,
    },
}

impl ServerConfig {
    /// SHA-256 over what defines the server — command, arguments, environment, folder, URL,
    /// headers. Environment and header values count by their own SHA-256: a changed value (a
    /// token swapped for another account's, a proxy URL) is a changed server, whose grants are
    /// suspended until the person reviews it.
    pub fn definition_hash(&self) -> String {
        let by_hash = |map: &BTreeMap<String, String>| -> BTreeMap<String, String> {
            map.iter()
                .map(|(name, value)| {
                    (
                        name.clone(),
                        crate::args_hash(&Value::String(value.clone())),
                    )
                })
                .collect()
        };
        let pinned = match self {
            ServerConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => serde_json::json!({
                "command": command, "args": args, "env": by_hash(env), "cwd": cwd,
            }),
            ServerConfig::Http { url, headers } => serde_json::json!({
                "url": url, "headers": by_hash(headers),
            }),
        };
        crate::args_hash(&pinned)
    }

    /// What the server runs or reaches, on one line for a person to confirm: the command line
    /// with its folder and environment names (values not shown), or the URL with its header
    /// names. Hidden characters shown escaped.
    pub fn describe(&self) -> String {
        let line = match self {
            ServerConfig::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let mut text = std::iter::once(command)
                    .chain(args)
                    .map(|part| {
                        if part.is_empty() || part.contains(char::is_whitespace) {
                            format!("{part:?}")
                        } else {
                            part.clone()
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ");
                if let Some(cwd) = cwd {
                    text.push_str(&format!("  (in {cwd})"));
                }
                if !env.is_empty() {
                    let names: Vec<&str> = env.keys().map(String::as_str).collect();
                    text.push_str(&format!("  [env: {}]", names.join(", ")));
                }
                text
            }
            ServerConfig::Http { url, headers } => {
                let mut text = url.clone();
                if !headers.is_empty() {
                    let names: Vec<&str> = headers.keys().map(String::as_str).collect();
                    text.push_str(&format!("  [headers: {}]", names.join(", ")));
                }
                text
            }
        };
        crate::display::visible_line(&line).into_owned()
    }

    /// Refuses a definition that cannot start: no command, or a URL that is not http(s).
    pub fn validate(&self) -> Result<(), String> {
        match self {
            ServerConfig::Stdio { command, .. } if command.trim().is_empty() => {
                Err("the command is empty".into())
            }
            ServerConfig::Http { url, .. }
                if !(url.starts_with("http://") || url.starts_with("https://")) =>
            {
                Err(format!(
                    "the URL '{url}' must start with http:// or https://"
                ))
            }
            ServerConfig::Http { headers, .. } => {
                match headers.keys().find(|name| name.trim().is_empty()) {
                    Some(_) => Err("a header has no name".into()),
                    None => Ok(()),
                }
            }
            ServerConfig::Stdio { env, .. } => match env
                .keys()
                .find(|name| name.trim().is_empty() || name.contains('='))
            {
                Some(name) => Err(format!(
                    "the environment variable name '{name}' is not valid"
                )),
                None => Ok(()),
            },
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            ServerConfig::Stdio { .. } => "stdio",
            ServerConfig::Http { .. } => "http",
        }
    }
}

/// Reads the `mcpServers` object of a Claude Desktop style config (`command`/`args`/`env`/`cwd`,
/// or `url` with optional `type` and `headers`). The whole file or just the object is accepted.
pub fn parse_mcp_servers(config: &Value) -> Result<Vec<(String, ServerConfig)>, String> {
    parse_mcp_servers_each(config)?
        .into_iter()
        .map(|(name, parsed)| parsed.map(|config| (name, config)))
        .collect()
}

/// One server of a config by name: its definition, or why it was refused.
pub type ParsedServer = (String, Result<ServerConfig, String>);

/// [`parse_mcp_servers`], each server on its own, so one bad entry does not hide the others
/// (the desktop's import says which servers were refused and why).
pub fn parse_mcp_servers_each(config: &Value) -> Result<Vec<ParsedServer>, String> {
    let servers = config.get("mcpServers").unwrap_or(config);
    let servers = servers
        .as_object()
        .ok_or("expected an object \"mcpServers\" of servers by name")?;
    Ok(servers
        .iter()
        .map(|(name, entry)| (name.clone(), parse_entry(name, entry)))
        .collect())
}

fn parse_entry(name: &str, entry: &Value) -> Result<ServerConfig, String> {
    crate::validate_server_name(name).map_err(|e| format!("server '{name}': {e}"))?;
    let strings = |key: &str| -> Result<BTreeMap<String, String>, String> {
        match entry.get(key) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(k, v)| {
                    v.as_str()
                        .map(|v| (k.clone(), v.to_string()))
                        .ok_or(format!("server '{name}': {key}.{k} must be a string"))
                })
                .collect(),
            Some(_) => Err(format!("server '{name}': {key} must be an object")),
        }
    };
    let kind = entry.get("type").and_then(Value::as_str);
    let config = match (
        entry.get("command").and_then(Value::as_str),
        entry.get("url").and_then(Value::as_str),
    ) {
        (Some(command), None) => {
            let args = match entry.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|a| {
                        a.as_str()
                            .map(str::to_string)
                            .ok_or(format!("server '{name}': args must be strings"))
                    })
                    .collect::<Result<_, _>>()?,
                Some(_) => return Err(format!("server '{name}': args must be an array")),
            };
            let cwd = entry.get("cwd").and_then(Value::as_str).map(str::to_string);
            ServerConfig::Stdio {
                command: command.to_string(),
                args,
                env: strings("env")?,
                cwd,
            }
        }
        (None, Some(url)) => {
            if kind.is_some_and(|k| k == "sse") {
                return Err(format!(
                    "server '{name}': the old SSE transport is not supported; use its streamable-HTTP URL"
                ));
            }
            ServerConfig::Http {
                url: url.to_string(),
                headers: strings("headers")?,
            }
        }
        (Some(_), Some(_)) => {
            return Err(format!(
                "server '{name}': give either command or url, not both"
            ));
        }
        (None, None) => return Err(format!("server '{name}': needs a command or a url")),
    };
    config
        .validate()
        .map_err(|e| format!("server '{name}': {e}"))?;
    Ok(config)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn imports_claude_desktop_config() {
        let file = json!({"mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"], "env": {"A": "1"}},
            "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer x"}}
        }});
        let servers = parse_mcp_servers(&file).unwrap();
        assert_eq!(servers.len(), 2);
        assert!(
            matches!(&servers[0].1, ServerConfig::Stdio { command, args, .. } if command == "npx" && args.len() == 3)
        );
        assert!(matches!(&servers[1].1, ServerConfig::Http { url, .. } if url.ends_with("/mcp")));
        assert!(parse_mcp_servers(&json!({"mcpServers": {"bad name": {"command": "x"}}})).is_err());
        assert!(parse_mcp_servers(&json!({"mcpServers": {"x": {}}})).is_err());
    }

    #[test]
    fn each_server_is_parsed_on_its_own() {
        let file = json!({"mcpServers": {
            "good": {"command": "npx", "args": ["-y", "pkg"]},
            "old": {"type": "sse", "url": "https://example.com/sse"},
            "blank": {"command": " "},
            "ftp": {"url": "ftp://example.com"},
        }});
        let parsed = parse_mcp_servers_each(&file).unwrap();
        let refused: Vec<&str> = parsed
            .iter()
            .filter(|(_, p)| p.is_err())
            .map(|(name, _)| name.as_str())
            .collect();
        assert_eq!(refused, ["blank", "ftp", "old"]);
        assert!(matches!(&parsed[2], (name, Ok(ServerConfig::Stdio { .. })) if name == "good"));
        assert!(parsed[3].1.as_ref().unwrap_err().contains("SSE"));
        // All or nothing where one answer is wanted (`airlock servers import`).
        assert!(parse_mcp_servers(&file).is_err());
        assert!(parse_mcp_servers_each(&json!([1])).is_err());
    }

    /// Security finding: the pin hashed env and header *names* only, so swapping a token's
    /// value kept every grant.
    #[test]
    fn every_part_of_the_definition_changes_its_pin_values_included() {
        let stdio = |args: Vec<String>, value: &str| ServerConfig::Stdio {
            command: "c".into(),
            args,
            env: [("K".into(), value.into())].into(),
            cwd: None,
        };
        let http = |value: &str| ServerConfig::Http {
            url: "https://example.com/mcp".into(),
            headers: [("Authorization".into(), value.into())].into(),
        };
        let base = stdio(vec![], "1");
        assert_eq!(base.definition_hash(), stdio(vec![], "1").definition_hash());
        assert_ne!(base.definition_hash(), stdio(vec![], "2").definition_hash());
        assert_ne!(
            base.definition_hash(),
            stdio(vec!["x".into()], "1").definition_hash()
        );
        assert_ne!(
            http("Bearer a").definition_hash(),
            http("Bearer b").definition_hash()
        );
    }
}
