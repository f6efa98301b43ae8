//! What a channel asks of the engine: a decision (an elicitation's answer is one).

use airlock_core::RememberScope;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The largest body that carries decisions (a batch, or the window's invoke of one): "Approve
/// all" on 10,000 waiting calls sends one decision each with its 64-hex hash, ~2.5 MB of JSON,
/// past axum's default limit of 2 MB. Refusing it for its size would leave the person unable to
/// clear a long inbox at once.
pub const DECISIONS_BODY_LIMIT: usize = 64 * 1024 * 1024;

/// A decision as a channel submits it (the inbox, the chat, a notification, the phone, the API,
/// the CLI): which item, what is decided about it, and what the person was shown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DecisionRequest {
    pub approval_id: String,
    pub decision: Decision,
    /// When the channel acts inside one session (the chat), the approval must belong to it.
    #[serde(default)]
    pub session: Option<String>,
    /// The hash of the arguments the person was shown; a mismatch refuses the decision.
    #[serde(default)]
    pub args_hash: Option<String>,
}

impl DecisionRequest {
    /// Run the item as it is, nothing kept for later calls.
    pub fn approve(approval_id: impl Into<String>) -> Self {
        Self::new(approval_id, Decision::approve())
    }

    /// Deny it, with the reason the model reads.
    pub fn deny(approval_id: impl Into<String>, reason: Option<String>) -> Self {
        Self::new(
            approval_id,
            Decision::Deny {
                reason,
                remember: None,
                exact_args: false,
            },
        )
    }

    pub fn new(approval_id: impl Into<String>, decision: Decision) -> Self {
        Self {
            approval_id: approval_id.into(),
            decision,
            session: None,
            args_hash: None,
        }
    }

    /// Only when the arguments shown are still those waiting.
    pub fn shown(mut self, args_hash: impl Into<String>) -> Self {
        self.args_hash = Some(args_hash.into());
        self
    }
}

/// What a person decides about one item. Each kind an item accepts is in its
/// `available_decisions` ([`DecisionKind`]); the engine refuses one it does not offer. Keeping
/// the decision for later calls (remember, allow for this chat, a timed or counted grant) is an
/// option of the decision it keeps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Decision {
    /// Run the tool call (edited, or kept for later calls, as the [`Approval`] says).
    Approve(Approval),
    /// Do not run it; the model reads the reason.
    Deny {
        #[serde(default)]
        reason: Option<String>,
        /// Deny later calls of the tool too (this session or always).
        #[serde(default)]
        remember: Option<RememberScope>,
        /// Remember for exactly these arguments instead of the whole tool.
        #[serde(default)]
        exact_args: bool,
    },
    /// An elicitation's answer: accept (with the form's content), decline or cancel.
    Answer(ElicitationAnswer),
}

/// An approval: the arguments that run instead (an edit), and what is kept for later calls.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Approval {
    /// Run with these arguments instead of the call's own (an edit).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub args: Option<Value>,
    /// Let later calls of the tool in this chat run without asking.
    #[serde(default)]
    pub for_chat: bool,
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub remember: Option<RememberScope>,
    /// Remember for exactly the arguments that run (the edit, when there is one) instead of
    /// the whole tool; with a grant, the grant covers exactly these.
    #[serde(default)]
    pub exact_args: bool,
    /// Let later calls run for a while or a number of times.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub grant: Option<GrantRequest>,
}

impl Decision {
    /// Approve as it is.
    pub fn approve() -> Self {
        Decision::Approve(Approval::default())
    }

    /// Approve with edited arguments.
    pub fn edit(args: Value) -> Self {
        Decision::Approve(Approval {
            args: Some(args),
            ..Approval::default()
        })
    }

    /// Whether it lets the call run (or accepts the form).
    pub fn approves(&self) -> bool {
        match self {
            Decision::Approve(_) => true,
            Decision::Deny { .. } => false,
            Decision::Answer(answer) => answer.action == ElicitationAction::Accept,
        }
    }

    /// Whether it keeps anything for later calls (a paired device may not).
    pub fn keeps_anything(&self) -> bool {
        match self {
            Decision::Approve(approval) => {
                approval.for_chat || approval.remember.is_some() || approval.grant.is_some()
            }
            Decision::Deny { remember, .. } => remember.is_some(),
            Decision::Answer(_) => false,
        }
    }
}

/// One kind of decision an inbox item accepts (its `available_decisions`): the buttons a
/// channel shows for it, and nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum DecisionKind {
    /// Run it as it is.
    Approve,
    /// Run it with edited arguments.
    Edit,
    /// Do not run it, with a reason.
    Deny,
    /// Let later calls of the tool in this chat run without asking.
    AllowForChat,
    /// Remember the decision for later calls (this session or always).
    Remember,
    /// Let later calls run for a while or a number of times.
    Grant,
    /// An elicitation: send the form.
    Accept,
    /// An elicitation: say no.
    Decline,
    /// An elicitation: do not answer.
    Cancel,
}

/// A timed or counted grant asked for with an approval.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct GrantRequest {
    /// Let later calls of the tool run for this many seconds — calls in the chats of `scope`
    /// whose arguments `args` covers.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional, type = "number"))]
    pub for_secs: Option<u64>,
    /// This call and `times - 1` more run without asking.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub times: Option<u32>,
    /// The chats the grant covers. By default this chat (the approval's session; every chat
    /// only with `remember: always`).
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub scope: Option<GrantScope>,
    /// The arguments the grant covers. By default the suggested pattern (the file's folder,
    /// the command's prefix that cannot chain; these exact arguments when the call has
    /// neither); the approval's `exact_args` narrows it to these arguments.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub args: Option<GrantArgs>,
    /// A glob the call's command or path must match instead of the suggested pattern (matched
    /// as an allow rule's: a command glob never covers a chained command). It must cover the
    /// call being approved.
    #[serde(default)]
    #[cfg_attr(feature = "ts", ts(optional))]
    pub pattern: Option<String>,
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    /// The wire shape every channel sends (`POST /v1/decisions`, the window's `decide`, the
    /// phone): the decision's kind is a tag, the approval's options sit beside it.
    #[test]
    fn a_decision_is_tagged_by_its_kind_on_the_wire() {
        let read = |value: Value| serde_json::from_value::<DecisionRequest>(value).unwrap();
        let edit = read(json!({"approval_id": "apr_1", "args_hash": "h",
            "decision": {"kind": "approve", "args": {"path": "b.txt"}, "grant": {"times": 3}}}));
        assert_eq!(edit.args_hash.as_deref(), Some("h"));
        assert_eq!(
            edit.decision,
            Decision::Approve(Approval {
                args: Some(json!({"path": "b.txt"})),
                grant: Some(GrantRequest {
                    times: Some(3),
                    ..GrantRequest::default()
                }),
                ..Approval::default()
            })
        );
        assert_eq!(
            read(json!({"approval_id": "apr_1", "decision": {"kind": "deny", "reason": "no"}}))
                .decision,
            DecisionRequest::deny("apr_1", Some("no".into())).decision
        );
        let answer = read(json!({"approval_id": "apr_2",
            "decision": {"kind": "answer", "action": "accept", "content": {"name": "Ada"}}}));
        assert!(answer.decision.approves());
        assert!(!answer.decision.keeps_anything());
        // The old boolean, or a kind nobody defined, is no decision at all.
        for bad in [
            json!({"approval_id": "apr_1", "approve": true}),
            json!({"approval_id": "apr_1", "decision": {"kind": "delegate"}}),
        ] {
            assert!(serde_json::from_value::<DecisionRequest>(bad).is_err());
        }
        // Round trip.
        let json = serde_json::to_value(&edit).unwrap();
        assert_eq!(json["decision"]["kind"], "approve");
        assert_eq!(read(json), edit);
    }
}
