//! What can go wrong in the engine, and the one mapping of it to an [`ErrorCode`] that every
//! channel uses: the local API's HTTP status, the desktop commands' `code`, the CLI's exit.

use airlock_core::policy::PolicyError;
use airlock_protocol::ErrorCode;
use airlock_store::StoreError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Policy(#[from] PolicyError),
    #[error(
        "no model provider is configured; run `airlock provider set --base-url URL --model NAME`"
    )]
    NoProvider,
    #[error("the model provider settings are invalid: {0}")]
    Provider(String),
    /// The session's turn is running; `why` says what it waits for (see `busy_reason`).
    #[error("the chat '{session}' {why}")]
    Busy { session: String, why: String },
    #[error("no session named '{0}'")]
    UnknownSession(String),
    #[error("no server named '{0}'")]
    UnknownServer(String),
    #[error("no rule with id '{0}' (`airlock rules list` shows them)")]
    UnknownRule(String),
    #[error("cannot read the log {path}: {message}")]
    ServerLog { path: PathBuf, message: String },
    #[error("no tool {server}/{tool}")]
    UnknownTool { server: String, tool: String },
    #[error("edited arguments refused: {0}")]
    InvalidEdit(String),
    /// An elicitation's answer that does not fit its form; the message names the fields.
    #[error("answer refused: {0}")]
    InvalidAnswer(String),
    /// The decision named other arguments than those waiting: a stale view or a replay.
    #[error("decision refused: {0}")]
    Stale(String),
    /// The call may not run on this approval (a blocked tool, a deny rule, a channel that
    /// could not show it whole).
    #[error("decision refused: {0}")]
    NotAllowed(String),
    #[error("{0}")]
    Invalid(String),
    #[error("cannot prepare the data directory {path}: {message}")]
    DataDir { path: PathBuf, message: String },
}

impl EngineError {
    /// The message as the desktop window shows it: where the command line's text names a
    /// command, the window names its own screen.
    pub fn window_message(&self) -> String {
        match self {
            EngineError::NoProvider => {
                "No model provider is set up yet: open Settings → Model provider, pick one and save it.".into()
            }
            EngineError::UnknownRule(id) => {
                format!("no rule with id '{id}' (Settings → Argument rules lists them)")
            }
            other => other.to_string(),
        }
    }

    pub fn code(&self) -> ErrorCode {
        match self {
            EngineError::Store(error) if error.is_unavailable() => ErrorCode::StorageFailed,
            EngineError::Store(StoreError::UnknownApproval(_)) => ErrorCode::UnknownApproval,
            EngineError::Store(
                StoreError::AlreadyDecided { .. } | StoreError::AlreadyClaimed { .. },
            ) => ErrorCode::AlreadyDecided,
            EngineError::Store(StoreError::ForeignSession { .. }) => ErrorCode::ForeignSession,
            EngineError::Store(StoreError::Invalid(_)) => ErrorCode::Invalid,
            EngineError::InvalidEdit(_) | EngineError::InvalidAnswer(_) => ErrorCode::InvalidEdit,
            EngineError::Stale(_) => ErrorCode::StaleArguments,
            EngineError::NotAllowed(_) => ErrorCode::NotAllowed,
            EngineError::UnknownSession(_) => ErrorCode::UnknownSession,
            EngineError::UnknownTool { .. } => ErrorCode::UnknownTool,
            EngineError::UnknownServer(_) => ErrorCode::UnknownServer,
            EngineError::UnknownRule(_) => ErrorCode::UnknownRule,
            EngineError::Busy { .. } => ErrorCode::Busy,
            EngineError::NoProvider => ErrorCode::NoProvider,
            EngineError::Invalid(_) | EngineError::Policy(_) | EngineError::Provider(_) => {
                ErrorCode::Invalid
            }
            _ => ErrorCode::Internal,
        }
    }
}
