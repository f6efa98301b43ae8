//! The hook entries of the agents' JSON configs. Claude Code (`settings.json`), Codex
//! (`hooks.json`), Qwen Code and Gemini CLI (`settings.json`) and goose (a plugin's
//! `hooks.json`) nest handlers in matcher groups: `{"hooks": {"PreToolUse": [{"matcher": "*",
//! "hooks": [{"type": "command", "command": …, "timeout": …}]}]}}`; Copilot CLI and Cursor list
//! them under the event (`{"version": 1, "hooks": {"preToolUse": [{"bash": …}]}}`). Each agent's
//! [`Layout`] says which, and how it spells the command, the timeout and its fail-closed switch.
//! Airlock's entries are the ones whose command runs `airlock-hook AGENT` (or, as installed
//! before the hook had its own binary, `airlock hook AGENT`); every other entry is left as it is.

use crate::connect::files::{pretty, read_object, write_with_backup};
use crate::connect::{ConnectError, ConnectReport, Options, Result};
use airlock_core::HOOK_BINARY;
use airlock_protocol::agents::AGENT_HOOK_PATH;
use serde_json::{Value, json};
use std::path::Path;

/// How one agent's config holds a hook handler.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// The events Airlock's handler is installed on, as the agent names them.
    pub events: &'static [&'static str],
    /// `Some(matcher)`: handlers nest in a group `{"matcher", "hooks": […]}` (`Some("")`: a
    /// group without a matcher); `None`: handlers are listed under the event.
    pub group_matcher: Option<&'static str>,
    /// The key that holds the command (`command`; Copilot: `bash`).
    pub command_key: &'static str,
    /// The key that holds the timeout (`timeout`; Copilot: `timeoutSec`).
    pub timeout_key: &'static str,
    /// Whether the timeout is in milliseconds (Qwen Code, Gemini CLI) rather than seconds.
    pub timeout_in_ms: bool,
    /// More fields of the handler, as JSON text: the agent's fail-closed switch and the like.
    pub handler_fields: &'static str,
    /// Fields the file itself needs (`{"version": 1}`), as JSON text.
    pub file_fields: &'static str,
}

impl Layout {
    /// Claude Code's and Codex's shape, on these events.
    pub const fn grouped(events: &'static [&'static str]) -> Self {
        Layout {
            events,
            group_matcher: Some("*"),
            command_key: "command",
            timeout_key: "timeout",
            timeout_in_ms: false,
            handler_fields: r#"{"type": "command"}"#,
            file_fields: "{}",
        }
    }

    fn handler(&self, command: &str, options: &Options) -> Value {
        let mut handler = object_of(self.handler_fields);
        handler[self.command_key] = json!(command);
        handler[self.timeout_key] = if self.timeout_in_ms {
            json!(options.timeout_secs.saturating_mul(1000))
        } else {
            json!(options.timeout_secs)
        };
        handler
    }
}

/// A layout's JSON text as an object (its texts are constants of this crate).
fn object_of(text: &str) -> Value {
    serde_json::from_str::<Value>(text)
        .ok()
        .filter(Value::is_object)
        .unwrap_or_else(|| json!({}))
}

/// Whether a hook handler is Airlock's for this agent: its command runs Airlock's hook, or (an
/// HTTP hook) it posts to the loopback API's hook route for this agent.
fn is_ours(handler: &Value, agent: &str) -> bool {
    let text = |key: &str| handler.get(key).and_then(Value::as_str);
    ["command", "bash"]
        .iter()
        .any(|key| text(key).is_some_and(|command| is_our_command(command, agent)))
        || (text("type") == Some("http") && text("url").is_some_and(|url| is_our_url(url, agent)))
}

/// Whether an HTTP hook's URL is the local API's hook route for this agent.
fn is_our_url(url: &str, agent: &str) -> bool {
    let path = url.split('?').next().unwrap_or_default();
    path.starts_with("http://127.0.0.1:") && path.ends_with(&format!("{AGENT_HOOK_PATH}{agent}"))
}

/// An HTTP hook: where the agent posts its events, and the agent's own token it sends.
#[derive(Clone)]
pub struct HttpHook {
    /// The engine's hook route for this agent on its loopback port (`AgentToken::hook_url`).
    pub url: String,
    /// The agent's own token (`issue_agent_token`), never the main API token.
    pub token: String,
}

impl std::fmt::Debug for HttpHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpHook").field("url", &self.url).finish()
    }
}

/// Whether a hook command runs Airlock's hook for this agent.
pub(crate) fn is_our_command(command: &str, agent: &str) -> bool {
    let runs_hook_binary = command.contains(HOOK_BINARY)
        && (command.contains(&format!(" {agent} --timeout "))
            || command.ends_with(&format!(" {agent}")));
    command.contains("airlock") && (runs_hook_binary || command.contains(&format!(" hook {agent}")))
}

fn unparsable(path: &Path, message: &str) -> ConnectError {
    ConnectError::Unparsable {
        path: path.into(),
        message: message.into(),
    }
}

/// Removes Airlock's handlers of `agent` from every event; groups left empty go too. Returns
/// one line per removed handler.
fn remove_ours(config: &mut Value, path: &Path, agent: &str) -> Result<Vec<String>> {
    let mut removed = Vec::new();
    let Some(hooks) = config.get_mut("hooks") else {
        return Ok(removed);
    };
    let hooks = hooks
        .as_object_mut()
        .ok_or_else(|| unparsable(path, "\"hooks\" is not an object"))?;
    for (event, groups) in hooks.iter_mut() {
        let Some(groups) = groups.as_array_mut() else {
            continue;
        };
        for group in groups.iter_mut() {
            if let Some(handlers) = group.get_mut("hooks").and_then(Value::as_array_mut) {
                let before = handlers.len();
                handlers.retain(|h| !is_ours(h, agent));
                for _ in handlers.len()..before {
                    removed.push(format!("- {event} hook: airlock hook {agent}"));
                }
            }
        }
        // Handlers listed under the event itself (Copilot CLI, Cursor).
        let before = groups.len();
        groups.retain(|handler| !is_ours(handler, agent));
        for _ in groups.len()..before {
            removed.push(format!("- {event} hook: airlock hook {agent}"));
        }
        groups.retain(|g| {
            g.get("hooks")
                .and_then(Value::as_array)
                .is_none_or(|handlers| !handlers.is_empty())
        });
    }
    hooks.retain(|_, groups| groups.as_array().is_none_or(|g| !g.is_empty()));
    if hooks.is_empty()
        && let Some(object) = config.as_object_mut()
    {
        object.remove("hooks");
    }
    Ok(removed)
}

/// The config with Airlock's hook on the layout's events (replacing an older one of Airlock's).
pub fn with_hooks(
    config: &Value,
    path: &Path,
    agent: &str,
    layout: &Layout,
    options: &Options,
) -> Result<(Value, Vec<String>)> {
    let command = options.hook_command(agent);
    let handler = layout.handler(&command, options);
    with_handler(
        config,
        path,
        agent,
        layout,
        &handler,
        &format!("hook (every tool): {command}"),
    )
}

/// The config with Airlock's HTTP hook on the layout's events, in place of any hook of
/// Airlock's: it posts to the local API with the agent's own token, and blocks the call when it
/// gets no answer (`onFailure: "block"`: no engine, a broken connection, a timeout).
pub fn with_http_hook(
    config: &Value,
    path: &Path,
    agent: &str,
    layout: &Layout,
    options: &Options,
    hook: &HttpHook,
) -> Result<(Value, Vec<String>)> {
    let url = format!("{}?timeout={}", hook.url, options.timeout_secs);
    let handler = json!({
        "type": "http",
        "url": url,
        "headers": {"Authorization": format!("Bearer {}", hook.token)},
        "timeout": options.timeout_secs,
        "onFailure": "block",
    });
    let shown = format!(
        "HTTP hook (every tool): {url} with {agent}'s own token; the call is blocked when Airlock does not answer"
    );
    with_handler(config, path, agent, layout, &handler, &shown)
}

fn with_handler(
    config: &Value,
    path: &Path,
    agent: &str,
    layout: &Layout,
    handler: &Value,
    shown: &str,
) -> Result<(Value, Vec<String>)> {
    let mut config = config.clone();
    remove_ours(&mut config, path, agent)?;
    let object = config
        .as_object_mut()
        .ok_or_else(|| unparsable(path, "not a JSON object"))?;
    if let Value::Object(fields) = object_of(layout.file_fields) {
        for (key, value) in fields {
            object.entry(key).or_insert(value);
        }
    }
    let hooks = object
        .entry("hooks")
        .or_insert_with(|| json!({}))
        .as_object_mut()
        .ok_or_else(|| unparsable(path, "\"hooks\" is not an object"))?;
    let mut changes = Vec::new();
    for event in layout.events {
        let groups = hooks
            .entry(event.to_string())
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .ok_or_else(|| unparsable(path, &format!("\"hooks.{event}\" is not a list")))?;
        groups.push(match layout.group_matcher {
            Some("") => json!({"hooks": [handler.clone()]}),
            Some(matcher) => json!({"matcher": matcher, "hooks": [handler.clone()]}),
            None => handler.clone(),
        });
        changes.push(format!("+ {event} {shown}"));
    }
    Ok((config, changes))
}

pub fn connect(
    path: &Path,
    agent: &str,
    layout: &Layout,
    options: &Options,
) -> Result<ConnectReport> {
    let before = read_object(path)?;
    let (after, changes) = with_hooks(&before, path, agent, layout, options)?;
    finish(path, agent, &before, &after, changes)
}

/// [`connect`] with the HTTP hook. The file holds the agent's token from now on: it is made
/// readable by its owner only.
pub fn connect_http(
    path: &Path,
    agent: &str,
    layout: &Layout,
    options: &Options,
    hook: &HttpHook,
) -> Result<ConnectReport> {
    let before = read_object(path)?;
    let (after, changes) = with_http_hook(&before, path, agent, layout, options, hook)?;
    let report = finish(path, agent, &before, &after, changes)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(|e| {
            ConnectError::Write {
                path: path.into(),
                message: e.to_string(),
            }
        })?;
    }
    Ok(report)
}

/// Removes Airlock's hook. With `own_file` (a file only Airlock writes: Copilot's
/// `hooks/airlock.json`, goose's plugin), a file left with nothing but its own fields is removed.
pub fn disconnect(
    path: &Path,
    agent: &str,
    layout: &Layout,
    own_file: bool,
) -> Result<ConnectReport> {
    if !path.exists() {
        return finish(path, agent, &json!({}), &json!({}), Vec::new());
    }
    let before = read_object(path)?;
    let mut after = before.clone();
    let changes = remove_ours(&mut after, path, agent)?;
    if own_file && !changes.is_empty() && after == object_of(layout.file_fields) {
        std::fs::remove_file(path).map_err(|e| ConnectError::Write {
            path: path.into(),
            message: e.to_string(),
        })?;
        return Ok(ConnectReport {
            agent: agent.into(),
            path: path.display().to_string(),
            changed: true,
            backup: None,
            changes: [
                changes,
                vec![format!("- {} (Airlock's own file)", path.display())],
            ]
            .concat(),
        });
    }
    finish(path, agent, &before, &after, changes)
}

/// Writes the file when it changed.
pub fn finish(
    path: &Path,
    agent: &str,
    before: &Value,
    after: &Value,
    changes: Vec<String>,
) -> Result<ConnectReport> {
    let changed = before != after;
    let mut changes = changes;
    if changed && let Some(target) = crate::connect::files::link_target(path) {
        changes.push(format!(
            "~ {} is a link: the change is written to {}",
            path.display(),
            target.display()
        ));
    }
    let backup = if changed {
        write_with_backup(path, &pretty(after))?
    } else {
        None
    };
    Ok(ConnectReport {
        agent: agent.into(),
        path: path.display().to_string(),
        changed,
        backup: backup.map(|b| b.display().to_string()),
        changes: if changed { changes } else { Vec::new() },
    })
}

/// Codex's keys of Airlock's handlers in this file: `<abs path>:<event in snake case>:<group
/// index>:<handler index>`.
pub fn our_keys(path: &Path, agent: &str) -> Result<Vec<String>> {
    let config = read_object(path)?;
    let source = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut keys = Vec::new();
    let Some(hooks) = config.get("hooks").and_then(Value::as_object) else {
        return Ok(keys);
    };
    for (event, groups) in hooks {
        let snake = snake_case(event);
        for (g, group) in groups.as_array().into_iter().flatten().enumerate() {
            for (h, handler) in group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                if is_ours(handler, agent) {
                    keys.push(format!("{}:{snake}:{g}:{h}", source.display()));
                }
            }
        }
    }
    Ok(keys)
}

/// `PreToolUse` → `pre_tool_use`.
fn snake_case(event: &str) -> String {
    let mut out = String::new();
    for (i, c) in event.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether Airlock's hook is on the layout's first event (its gate).
pub fn connected(path: &Path, agent: &str, layout: &Layout) -> Result<bool> {
    let config = read_object(path)?;
    let Some(event) = layout.events.first() else {
        return Ok(false);
    };
    Ok(config
        .pointer(&format!("/hooks/{event}"))
        .and_then(Value::as_array)
        .is_some_and(|entries| {
            entries.iter().any(|entry| {
                is_ours(entry, agent)
                    || entry
                        .get("hooks")
                        .and_then(Value::as_array)
                        .is_some_and(|handlers| handlers.iter().any(|h| is_ours(h, agent)))
            })
        }))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use std::path::PathBuf;

    const PRE: Layout = Layout::grouped(&["PreToolUse"]);

    fn options() -> Options {
        Options {
            airlock: PathBuf::from("/opt/air lock/airlock"),
            data_dir: Some(PathBuf::from("/data/it's")),
            timeout_secs: 30,
            codex: None,
        }
    }

    // Unix only: the command is written for /bin/sh (`exec`, sh quoting, `/` paths); what the
    // agents run on Windows is not verified (docs/PLATFORMS.md).
    #[cfg(unix)]
    #[test]
    fn connecting_twice_changes_once_and_keeps_the_persons_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let theirs = json!({
            "model": "opus",
            "hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "lint.sh"}]}],
                      "Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}]}]},
        });
        std::fs::write(&path, theirs.to_string()).unwrap();
        let first = connect(&path, "claude-code", &PRE, &options()).unwrap();
        assert!(first.changed && first.backup.is_some(), "{first:?}");
        let backup: Value =
            serde_json::from_str(&std::fs::read_to_string(first.backup.unwrap()).unwrap()).unwrap();
        assert_eq!(backup, theirs, "the backup is the file as it was");
        let second = connect(&path, "claude-code", &PRE, &options()).unwrap();
        assert!(!second.changed, "{second:?}");
        let now: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(now["model"], "opus");
        assert_eq!(now["hooks"]["Stop"], theirs["hooks"]["Stop"]);
        let pre = now["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(pre.len(), 2, "{pre:?}");
        assert_eq!(pre[0], theirs["hooks"]["PreToolUse"][0]);
        // The command survives `sh -c` quoting: spaces and a quote in the paths.
        let command = pre[1]["hooks"][0]["command"].as_str().unwrap();
        assert_eq!(
            command,
            r#"exec '/opt/air lock/airlock' --data-dir '/data/it'\''s' hook claude-code --timeout 30"#
        );
        assert!(connected(&path, "claude-code", &PRE).unwrap());

        let undone = disconnect(&path, "claude-code", &PRE, false).unwrap();
        assert!(undone.changed);
        let after: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            after, theirs,
            "disconnect leaves the person's file as it was"
        );
        assert!(!connected(&path, "claude-code", &PRE).unwrap());
    }

    // Unix only: the command is written for /bin/sh (`exec`, sh quoting, `/` paths); what the
    // agents run on Windows is not verified (docs/PLATFORMS.md).
    #[cfg(unix)]
    #[test]
    fn the_hooks_own_binary_is_installed_when_it_is_there_and_replaces_an_older_entry() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin dir");
        std::fs::create_dir(&bin).unwrap();
        let options = Options {
            airlock: bin.join("airlock"),
            data_dir: None,
            timeout_secs: 30,
            codex: None,
        };
        let path = dir.path().join("settings.json");
        // Before the hook had its own binary (or with none beside `airlock`): `airlock hook`.
        connect(&path, "codex", &PRE, &options).unwrap();
        let old: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let command = old["hooks"]["PreToolUse"][0]["hooks"][0]["command"].clone();
        assert!(
            command
                .as_str()
                .unwrap()
                .ends_with("/airlock' hook codex --timeout 30"),
            "{command}"
        );

        std::fs::write(bin.join(HOOK_BINARY), "").unwrap();
        let report = connect(&path, "codex", &PRE, &options).unwrap();
        assert!(report.changed);
        let now: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let groups = now["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(
            groups.len(),
            1,
            "the older entry is replaced, not kept: {groups:?}"
        );
        let command = groups[0]["hooks"][0]["command"].as_str().unwrap();
        assert_eq!(
            command,
            format!(
                "exec '{}' codex --timeout 30",
                bin.join(HOOK_BINARY).display()
            )
        );
        assert!(connected(&path, "codex", &PRE).unwrap());
        assert!(
            !connected(&path, "claude-code", &PRE).unwrap(),
            "one agent's hook is not another's"
        );
        disconnect(&path, "codex", &PRE, false).unwrap();
        assert!(!connected(&path, "codex", &PRE).unwrap());
    }

    /// `connect --http`: one HTTP hook with the agent's token that blocks when nobody answers,
    /// in place of the command hook; the person's entries stay; disconnect removes it.
    #[cfg(unix)]
    #[test]
    fn the_http_hook_replaces_the_command_hook_and_blocks_when_unanswered() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let theirs = json!({"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [{"type": "http", "url": "http://127.0.0.1:9/lint"}]}]}});
        std::fs::write(&path, theirs.to_string()).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        connect(&path, "claude-code", &PRE, &options()).unwrap();
        let hook = HttpHook {
            url: "http://127.0.0.1:23456/v1/agent-calls/hook/claude-code".into(),
            token: "airlock_agent_secret".into(),
        };
        let report = connect_http(&path, "claude-code", &PRE, &options(), &hook).unwrap();
        assert!(
            report
                .changes
                .iter()
                .all(|c| !c.contains("airlock_agent_secret")),
            "the token is shown: {report:?}"
        );
        let now: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let groups = now["hooks"]["PreToolUse"].as_array().unwrap();
        assert_eq!(groups.len(), 2, "{groups:?}");
        assert_eq!(groups[0], theirs["hooks"]["PreToolUse"][0]);
        assert_eq!(
            groups[1]["hooks"][0],
            json!({
                "type": "http",
                "url": "http://127.0.0.1:23456/v1/agent-calls/hook/claude-code?timeout=30",
                "headers": {"Authorization": "Bearer airlock_agent_secret"},
                "timeout": 30,
                "onFailure": "block",
            })
        );
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600,
            "a file with a token is its owner's only"
        );
        assert!(connected(&path, "claude-code", &PRE).unwrap());
        assert!(!connected(&path, "codex", &PRE).unwrap());
        disconnect(&path, "claude-code", &PRE, false).unwrap();
        let after: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(after, theirs);
    }

    #[test]
    fn a_file_that_does_not_parse_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        for text in ["{\"hooks\": ", "[1, 2]", "{\"hooks\": {\"PreToolUse\": 3}}"] {
            std::fs::write(&path, text).unwrap();
            let error = connect(&path, "codex", &PRE, &options()).unwrap_err();
            assert!(
                matches!(error, ConnectError::Unparsable { .. }),
                "{text}: {error}"
            );
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                text,
                "a refused file was changed"
            );
        }
    }
}
