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
    /// With an approval: let later calls of the tool run for this many seconds — calls in the
    /// chats of `grant_scope` whose arguments `grant_args` covers.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional, type = "number"))]
    pub for_secs: Option<u64>,
    /// With an approval: this call and `times - 1` more run without asking.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub times: Option<u32>,
    /// With `for_secs` or `times`: the chats the grant covers. By default this chat (the
    /// approval's session; every chat only with `remember: always`).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub grant_scope: Option<GrantScope>,
    /// With `for_secs` or `times`: the arguments the grant covers. By default the suggested
    /// pattern (the file's folder, the command's prefix that cannot chain; these exact
    /// arguments when the call has neither); `exact_args` narrows it to these arguments.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub grant_args: Option<GrantArgs>,
    /// With `for_secs` or `times`: a glob the call's command or path must match instead of the
    /// suggested pattern (matched as an allow rule's: a command glob never covers a chained
    /// command). It must cover the call being approved.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub grant_pattern: Option<String>,
}

/// The chats a timed or counted grant covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum GrantScope {
    /// The chat (or agent session) the approved call came from.
    #[default]
    Chat,
    /// Every chat and agent session.
    All,
}

/// The arguments a timed or counted grant covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum GrantArgs {
    /// The suggested pattern of what was approved ([`GrantOffer::label`]).
    #[default]
    Suggested,
    /// Any arguments of the tool. For a tool that runs commands a person confirms it first
    /// (the UI asks, the CLI needs `--any-args`).
    Any,
}

/// What a grant made from an inbox item would cover by default, for the control that makes it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GrantOffer {
    /// The suggested pattern: "commands starting `git status`", "anything under src/", or
    /// "these exact arguments".
    pub label: String,
    /// The tool runs commands (`run_command`, an agent's Bash or shell tool): "any arguments"
    /// is any command, confirmed explicitly.
    pub runs_commands: bool,
    /// The chat the narrow scope is, by name.
    pub session: String,
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
