//! What a channel asks of the engine: a decision, an elicitation's answer.

use airlock_core::RememberScope;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The largest body that carries decisions (a batch, or the window's invoke of one): "Approve
/// all" on 10,000 waiting calls sends one decision each with its 64-hex hash, ~2.5 MB of JSON,
/// past axum's default limit of 2 MB. Refusing it for its size would leave the person unable to
/// clear a long inbox at once.
pub const DECISIONS_BODY_LIMIT: usize = 64 * 1024 * 1024;

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
    /// With an approval: let later calls of the tool (or, with `exact_args`, these arguments)
    /// run for this many seconds — every session, or this one with `remember: session`.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional, type = "number"))]
    pub for_secs: Option<u64>,
    /// With an approval: this call and `times - 1` more run without asking.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub times: Option<u32>,
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
