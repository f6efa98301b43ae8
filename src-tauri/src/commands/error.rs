//! The typed error every command returns; the UI switches on `code` and shows `message`.

use airlock_engine::EngineError;
use airlock_store::StoreError;
use serde::Serialize;
use ts_rs::TS;

/// What went wrong, in words a program can match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    UnknownApproval,
    AlreadyDecided,
    ForeignSession,
    InvalidEdit,
    UnknownSession,
    UnknownTool,
    UnknownServer,
    Busy,
    NoProvider,
    Invalid,
    Internal,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS, thiserror::Error)]
#[error("{message}")]
pub struct CommandError {
    pub code: ErrorCode,
    pub message: String,
}

impl From<EngineError> for CommandError {
    fn from(error: EngineError) -> Self {
        let code = match &error {
            EngineError::Store(StoreError::UnknownApproval(_)) => ErrorCode::UnknownApproval,
            EngineError::Store(StoreError::AlreadyDecided { .. }) => ErrorCode::AlreadyDecided,
            EngineError::Store(StoreError::ForeignSession { .. }) => ErrorCode::ForeignSession,
            EngineError::Store(StoreError::Invalid(_)) => ErrorCode::Invalid,
            EngineError::InvalidEdit(_) => ErrorCode::InvalidEdit,
            EngineError::UnknownSession(_) => ErrorCode::UnknownSession,
            EngineError::UnknownTool { .. } => ErrorCode::UnknownTool,
            EngineError::UnknownServer(_) => ErrorCode::UnknownServer,
            EngineError::Busy { .. } => ErrorCode::Busy,
            EngineError::NoProvider => ErrorCode::NoProvider,
            EngineError::Invalid(_) | EngineError::Policy(_) | EngineError::Provider(_) => {
                ErrorCode::Invalid
            }
            _ => ErrorCode::Internal,
        };
        Self {
            code,
            message: error.to_string(),
        }
    }
}

impl From<StoreError> for CommandError {
    fn from(error: StoreError) -> Self {
        EngineError::from(error).into()
    }
}

pub type CommandResult<T> = Result<T, CommandError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn engine_errors_keep_their_meaning() {
        let error = CommandError::from(EngineError::UnknownSession("x".into()));
        assert_eq!(error.code, ErrorCode::UnknownSession);
        assert!(error.message.contains("'x'"), "{}", error.message);
        let json =
            serde_json::to_value(CommandError::from(EngineError::NoProvider)).unwrap_or_default();
        assert_eq!(json["code"], "no_provider");
    }
}
