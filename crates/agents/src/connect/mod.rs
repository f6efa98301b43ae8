//! `airlock connect` / `disconnect` (the `connect` feature): edits other agents' own config files so their tool calls go
//! through Airlock — the hook entries of Claude Code (`settings.json`) and Codex (`hooks.json`
//! and its hook trust), or Claude Desktop's `mcpServers`, each rewritten to run through
//! `airlock mcp-proxy`. Idempotent; keeps a backup of the file as it was; refuses a file it cannot
//! parse; never drops the person's other entries. No engine needed: these are the agents' files.
//! Each agent's own writer is in its module ([`ConfigWriter`]); here is what they share.

pub(crate) mod codex_trust;
pub(crate) mod files;
pub(crate) mod hook_writer;
pub(crate) mod hooks;

use crate::Agent;
use airlock_core::HOOK_BINARY;
pub use airlock_protocol::{AgentConnection, ConnectReport};
use airlock_protocol::{AgentStatus, AgentView};
pub use hooks::HttpHook;
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

/// Whether `connect` connects an agent, and with what: each agent implements it in its module
/// (the `agents!` list reads it).
pub trait Connectable {
    const WRITER: Option<&'static dyn ConfigWriter> = None;
}

/// What one agent's `connect` / `disconnect` edits, in its module (one per agent).
pub trait ConfigWriter: Sync {
    /// Whether `--project DIR` names a project's config instead of the person's.
    fn takes_project(&self) -> bool {
        false
    }

    /// The file `connect` edits (`project`: only where [`ConfigWriter::takes_project`]).
    fn config_path(&self, project: Option<&Path>) -> Result<PathBuf>;

    fn connect(&self, path: &Path, options: &Options) -> Result<ConnectReport>;

    /// Why `connect --http` installs no HTTP hook for it; `None` where it does
    /// ([`ConfigWriter::connect_http`]).
    fn no_http_hook(&self) -> Option<&'static str> {
        Some(hook_writer::NO_HTTP_HOOK)
    }

    /// Connects it with an HTTP hook posting to the local API with its own token, blocking the
    /// call when nobody answers; only where [`ConfigWriter::no_http_hook`] is `None`.
    fn connect_http(
        &self,
        _path: &Path,
        _options: &Options,
        _hook: &HttpHook,
    ) -> Result<ConnectReport> {
        Err(ConnectError::Invalid(
            self.no_http_hook()
                .unwrap_or(hook_writer::NO_HTTP_HOOK)
                .into(),
        ))
    }

    fn disconnect(&self, path: &Path) -> Result<ConnectReport>;

    /// Whether the file sends the agent's calls through Airlock now.
    fn connected(&self, path: &Path) -> Result<bool>;

    /// What the person should know once it is connected (`airlock connect` prints it).
    fn connected_note(&self, report: &ConnectReport) -> Option<&'static str>;
}

/// An agent `airlock connect` connects, and the project it names (Claude Code's only).
#[derive(Clone)]
pub struct Target {
    agent: &'static dyn Agent,
    writer: &'static dyn ConfigWriter,
    project: Option<PathBuf>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Target")
            .field("agent", &self.agent.name())
            .field("project", &self.project)
            .finish()
    }
}

impl Target {
    pub fn parse(agent: &str, project: Option<PathBuf>) -> Result<Self> {
        let Some((agent, writer)) = connectable().find(|(a, _)| a.name() == agent) else {
            return Err(ConnectError::Invalid(format!(
                "'{agent}' is not an agent Airlock connects; expected one of: {}",
                names().join(" ")
            )));
        };
        if project.is_some() && !writer.takes_project() {
            let takes: Vec<&str> = connectable()
                .filter(|(_, w)| w.takes_project())
                .map(|(a, _)| a.name())
                .collect();
            return Err(ConnectError::Invalid(format!(
                "--project is for {} only",
                takes.join(", ")
            )));
        }
        Ok(Target {
            agent,
            writer,
            project,
        })
    }

    pub fn name(&self) -> &'static str {
        self.agent.name()
    }

    pub fn agent(&self) -> &'static dyn Agent {
        self.agent
    }

    pub fn writer(&self) -> &'static dyn ConfigWriter {
        self.writer
    }
}

/// The agents `airlock connect` connects, with their config writers.
pub fn connectable() -> impl Iterator<Item = (&'static dyn Agent, &'static dyn ConfigWriter)> {
    crate::CONFIG_WRITERS
        .iter()
        .filter_map(|(agent, writer)| Some((*agent, (*writer)?)))
}

/// Their names: the CLI's values for `connect` and `disconnect`.
pub fn names() -> Vec<&'static str> {
    connectable().map(|(agent, _)| agent.name()).collect()
}

/// The person's home folder.
pub(crate) fn home() -> Result<PathBuf> {
    dirs::home_dir().ok_or_else(|| ConnectError::Invalid("no home folder is set ($HOME)".into()))
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
    pub(crate) fn airlock_words(&self, args: &[&str]) -> Vec<String> {
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
    target.writer.config_path(target.project.as_deref())
}

pub fn connect(target: &Target, options: &Options) -> Result<ConnectReport> {
    target.writer.connect(&config_path(target)?, options)
}

/// [`connect`] with an HTTP hook ([`ConfigWriter::connect_http`]).
pub fn connect_http(target: &Target, options: &Options, hook: &HttpHook) -> Result<ConnectReport> {
    target
        .writer
        .connect_http(&config_path(target)?, options, hook)
}

pub fn disconnect(target: &Target) -> Result<ConnectReport> {
    target.writer.disconnect(&config_path(target)?)
}

/// Whether the target's config sends its calls through Airlock now.
pub fn status(target: &Target) -> Result<AgentConnection> {
    let path = config_path(target)?;
    Ok(AgentConnection {
        agent: target.name().into(),
        connected: target.writer.connected(&path)?,
        path: path.display().to_string(),
    })
}

/// Every agent Airlock connects, with what the engine knows of it (`views`: its fallback and
/// last request, under the name it asks as: Claude Desktop asks as `mcp-client`).
pub fn statuses(views: &[AgentView]) -> Result<Vec<AgentStatus>> {
    connectable()
        .map(|(agent, writer)| {
            let target = Target {
                agent,
                writer,
                project: None,
            };
            Ok(AgentStatus {
                connection: status(&target)?,
                view: views.iter().find(|v| v.name == agent.asks_as()).cloned(),
            })
        })
        .collect()
}

/// Whether `path` is where this process's `airlock` binary is (for messages).
pub fn same_file(a: &Path, b: &Path) -> bool {
    a.canonicalize().ok() == b.canonicalize().ok()
}
