//! What a channel asks of the engine: a decision, an elicitation's answer.

use airlock_core::RememberScope;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A decision as a channel submits it (the inbox, the chat, a notification, the API, the CLI).
#[derive(Debug, Clone, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DecisionRequest {
    pub approval_id: String,
    pub approve: bool,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub args: Option<Value>,
    #[serde(default)]
    pub for_chat: bool,
    #[serde(default)]
    pub remember: Option<RememberScope>,
    /// Remember for exactly the arguments that run (the edit, when there is one) instead of
    /// the whole tool.
    #[serde(default)]
    pub exact_args: bool,
    /// When the channel acts inside one session (the chat), the approval must belong to it.
    #[serde(default)]
    pub session: Option<String>,
    /// The hash of the arguments the person was shown; a mismatch refuses the decision.
    #[serde(default)]
    pub args_hash: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ElicitationAction {
    Accept,
    Decline,
    Cancel,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ElicitationAnswer {
    pub action: ElicitationAction,
    #[serde(default)]
    pub content: Option<Value>,
}

impl ElicitationAnswer {
    pub fn cancel() -> Self {
        Self {
            action: ElicitationAction::Cancel,
            content: None,
        }
    }
}
