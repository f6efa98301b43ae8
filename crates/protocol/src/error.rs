//! What went wrong, as a code a program can match: one mapping for the API's HTTP status, the
//! desktop commands' `code` and the CLI.

use serde::{Deserialize, Serialize};

/// What went wrong, in words a program can match (the UI switches on it, the API sends it as
/// `code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ErrorCode {
    UnknownApproval,
    AlreadyDecided,
    ForeignSession,
    InvalidEdit,
    /// The decision named other arguments than those waiting.
    StaleArguments,
    /// The call may not run on this approval (blocked, a deny rule, a notification).
    NotAllowed,
    UnknownSession,
    UnknownTool,
    UnknownServer,
    UnknownRule,
    /// No setting of this name that a person sets by name.
    UnknownSetting,
    Busy,
    NoProvider,
    Invalid,
    /// The disk refused a write: Airlock decides nothing more until it is restarted.
    StorageFailed,
    Internal,
}

impl ErrorCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnknownApproval => "unknown_approval",
            ErrorCode::AlreadyDecided => "already_decided",
            ErrorCode::ForeignSession => "foreign_session",
            ErrorCode::InvalidEdit => "invalid_edit",
            ErrorCode::StaleArguments => "stale_arguments",
            ErrorCode::NotAllowed => "not_allowed",
            ErrorCode::UnknownSession => "unknown_session",
            ErrorCode::UnknownTool => "unknown_tool",
            ErrorCode::UnknownServer => "unknown_server",
            ErrorCode::UnknownRule => "unknown_rule",
            ErrorCode::UnknownSetting => "unknown_setting",
            ErrorCode::Busy => "busy",
            ErrorCode::NoProvider => "no_provider",
            ErrorCode::Invalid => "invalid",
            ErrorCode::StorageFailed => "storage_failed",
            ErrorCode::Internal => "internal",
        }
    }

    /// The `airlock` command's exit status for it: every refusal and failure is 1 (the CLI's
    /// contract: 0 done, 1 refused or failed, 2 a usage error).
    pub fn cli_exit(self) -> u8 {
        1
    }

    /// The local API's HTTP status for it.
    pub fn http_status(self) -> u16 {
        match self {
            ErrorCode::UnknownApproval
            | ErrorCode::UnknownSession
            | ErrorCode::UnknownTool
            | ErrorCode::UnknownServer
            | ErrorCode::UnknownRule
            | ErrorCode::UnknownSetting => 404,
            ErrorCode::ForeignSession | ErrorCode::NotAllowed => 403,
            ErrorCode::AlreadyDecided
            | ErrorCode::StaleArguments
            | ErrorCode::Busy
            | ErrorCode::NoProvider => 409,
            ErrorCode::InvalidEdit => 422,
            ErrorCode::Invalid => 400,
            ErrorCode::StorageFailed => 503,
            ErrorCode::Internal => 500,
        }
    }
}

/// A command's refusal or failure as every surface sees it: a code to switch on and a message
/// to show (the window's names its screens, the API's and the phone's the command line's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[error("{message}")]
pub struct CommandError {
    pub code: ErrorCode,
    pub message: String,
}

impl CommandError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }

    /// A request that does not fit: a malformed argument, an unknown command.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Invalid, message)
    }
}

pub type CommandResult<T> = Result<T, CommandError>;
