//! The typed error every command returns; the UI switches on `code` and shows `message`.

use airlock_engine::EngineError;
pub use airlock_engine::ErrorCode;
use serde::Serialize;
use ts_rs::TS;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS, thiserror::Error)]
#[error("{message}")]
pub struct CommandError {
    pub code: ErrorCode,
    pub message: String,
}

impl From<EngineError> for CommandError {
    fn from(error: EngineError) -> Self {
        let code = error.code();
        Self {
            code,
            message: error.window_message(),
        }
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
        // The window points to its Settings screen, not to a shell command.
        let message = json["message"].as_str().unwrap_or_default();
        assert!(message.contains("Settings"), "{message}");
        assert!(!message.contains("airlock "), "{message}");
    }
}
