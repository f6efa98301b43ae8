//! `airlock connect` / `disconnect`: edits other agents' own config files so their tool calls go
//! through Airlock — the hook entries of Claude Code (`settings.json`) and Codex (`hooks.json`
//! and its hook trust), or Claude Desktop's `mcpServers`, each rewritten to run through
//! `airlock mcp-proxy`. Idempotent; keeps a backup of the file as it was; refuses a file it cannot
//! parse; never drops the person's other entries. No engine needed: these are the agents' files.

mod claude_desktop;
mod codex;
mod codex_trust;
mod files;
mod hooks;

use airlock_core::{HOOK_BINARY, MCP_CLIENT};
pub use airlock_protocol::{AgentConnection, ConnectReport};
use airlock_protocol::{AgentStatus, AgentView};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("cannot read {path}: {message}")]
    Read { path: PathBuf, message: String },
    #[error(
        "{path} is not a config Airlock can change ({message}); nothing was changed — fix or move it first"
    )]
    Unparsable { path: PathBuf, message: String },
    #[error("cannot write {path}: {message}")]
    Write { path: PathBuf, message: String },
    #[error("{0}")]
    Invalid(String),
}

pub type Result<T> = std::result::Result<T, ConnectError>;

/// What to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Claude Code's user settings, or a project's (`DIR/.claude/settings.json`).
    ClaudeCode {
        project: Option<PathBuf>,
    },
    Codex,
    ClaudeDesktop,
}

impl Target {
    pub fn parse(agent: &str, project: Option<PathBuf>) -> Result<Self> {
        match (agent, project) {
            ("claude-code", project) => Ok(Target::ClaudeCode { project }),
            ("codex", None) => Ok(Target::Codex),
            ("claude-desktop", None) => Ok(Target::ClaudeDesktop),
            ("codex" | "claude-desktop", Some(_)) => Err(ConnectError::Invalid(
                "--project is for claude-code only".into(),
            )),
            (other, _) => Err(ConnectError::Invalid(format!(
                "'{other}' is not an agent Airlock connects; expected one of: claude-code codex claude-desktop"
            ))),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Target::ClaudeCode { .. } => "claude-code",
            Target::Codex => "codex",
            Target::ClaudeDesktop => "claude-desktop",
        }
    }

    pub const ALL_NAMES: [&'static str; 3] = ["claude-code", "codex", "claude-desktop"];
}

/// How the installed command runs Airlock.
#[derive(Debug, Clone)]
pub struct Options {
    /// The `airlock` binary, by absolute path: agents run hooks without the person's PATH.
    pub airlock: PathBuf,
    /// Named in the command when it is not the default one.
    pub data_dir: Option<PathBuf>,
    /// The agent's hook timeout in seconds; the hook answers its fallback a little before.
    pub timeout_secs: u64,
    /// Codex's binary, asked for the hash of the hook it is to trust (default: `codex` on PATH).
    pub codex: Option<PathBuf>,
}

/// The default hook timeout: the agents' own default.
pub use airlock_core::DEFAULT_HOOK_TIMEOUT_SECS as DEFAULT_TIMEOUT_SECS;

/// A command line word, quoted for `/bin/sh -c` when it needs to be.
pub fn shell_word(word: &str) -> String {
    if !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-=:+,@".contains(c))
    {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

impl Options {
    /// `PROGRAM [--data-dir D] ARGS…`, as words.
    fn words_of(&self, program: &Path, args: &[&str]) -> Vec<String> {
        let mut words = vec![program.display().to_string()];
        if let Some(dir) = &self.data_dir {
            words.push("--data-dir".into());
            words.push(dir.display().to_string());
        }
        words.extend(args.iter().map(|a| a.to_string()));
        words
    }

    /// `airlock [--data-dir D] ARGS…`, as words.
    fn airlock_words(&self, args: &[&str]) -> Vec<String> {
        self.words_of(&self.airlock, args)
    }

    /// The hook's own binary beside `airlock`, when it is there (every build and package puts
    /// it there; `airlock hook` does the same, only slower to start).
    fn hook_binary(&self) -> Option<PathBuf> {
        let hook = self
            .airlock
            .with_file_name(format!("{HOOK_BINARY}{}", std::env::consts::EXE_SUFFIX));
        hook.is_file().then_some(hook)
    }

    /// The hook command for `/bin/sh -c`. `exec`: the hook is then the agent's own child, so
    /// it sees the agent die (dash would otherwise keep a shell in between).
    fn hook_command(&self, agent: &str) -> String {
        let timeout = self.timeout_secs.to_string();
        let words = match self.hook_binary() {
            Some(hook) => self.words_of(&hook, &[agent, "--timeout", &timeout]),
            None => self.airlock_words(&["hook", agent, "--timeout", &timeout]),
        };
        let words = words
            .iter()
            .map(|w| shell_word(w))
            .collect::<Vec<_>>()
            .join(" ");
        if cfg!(unix) {
            format!("exec {words}")
        } else {
            words
        }
    }
}

/// The file `connect` edits for this target.
pub fn config_path(target: &Target) -> Result<PathBuf> {
    let home = || {
        dirs::home_dir()
            .ok_or_else(|| ConnectError::Invalid("no home folder is set ($HOME)".into()))
    };
    Ok(match target {
        Target::ClaudeCode { project: Some(dir) } => dir.join(".claude").join("settings.json"),
        Target::ClaudeCode { project: None } => home()?.join(".claude").join("settings.json"),
        Target::Codex => codex::home()?.join("hooks.json"),
        Target::ClaudeDesktop => claude_desktop::config_path()?,
    })
}

pub fn connect(target: &Target, options: &Options) -> Result<ConnectReport> {
    let path = config_path(target)?;
    match target {
        Target::ClaudeCode { .. } => hooks::connect(&path, "claude-code", &["PreToolUse"], options),
        Target::Codex => codex::connect(&path, options),
        Target::ClaudeDesktop => claude_desktop::connect(&path, options),
    }
}

pub fn disconnect(target: &Target) -> Result<ConnectReport> {
    let path = config_path(target)?;
    match target {
        Target::ClaudeCode { .. } => hooks::disconnect(&path, "claude-code"),
        Target::Codex => codex::disconnect(&path),
        Target::ClaudeDesktop => claude_desktop::disconnect(&path),
    }
}

/// Whether the target's config sends its calls through Airlock now.
pub fn status(target: &Target) -> Result<AgentConnection> {
    let path = config_path(target)?;
    let connected = match target {
        Target::ClaudeCode { .. } => hooks::connected(&path, "claude-code")?,
        Target::Codex => hooks::connected(&path, "codex")?,
        Target::ClaudeDesktop => claude_desktop::connected(&path)?,
    };
    Ok(AgentConnection {
        agent: target.name().into(),
        connected,
        path: path.display().to_string(),
    })
}

/// Every agent Airlock connects, with what the engine knows of it (`views`: its fallback and
/// last request). Claude Desktop asks through the MCP proxy, as `mcp-client`.
pub fn statuses(views: &[AgentView]) -> Result<Vec<AgentStatus>> {
    Target::ALL_NAMES
        .iter()
        .map(|name| {
            let asks_as = if *name == "claude-desktop" {
                MCP_CLIENT
            } else {
                name
            };
            Ok(AgentStatus {
                connection: status(&Target::parse(name, None)?)?,
                view: views.iter().find(|v| v.name == asks_as).cloned(),
            })
        })
        .collect()
}

/// Whether `path` is where this process's `airlock` binary is (for messages).
pub fn same_file(a: &Path, b: &Path) -> bool {
    a.canonicalize().ok() == b.canonicalize().ok()
}
