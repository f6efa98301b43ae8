//! What every adapter writes beside its rows, computed once: the result a model reads for a
//! call it may not run, and the audit trail's details. The adapters differ in SQL only.

use crate::{ApprovalRow, DecisionInput, NewApproval, NewCall};
use airlock_core::policy::Step;
use airlock_core::{ApprovalStatus, CallState};
use serde_json::{Value, json};

/// The result the model reads for a call a decision did not approve (denied, expired,
/// cancelled), with the person's reason when they gave one.
pub fn unapproved_result(input: &DecisionInput) -> Value {
    let reason = input.reason.as_deref().filter(|r| !r.trim().is_empty());
    if input.status == ApprovalStatus::Cancelled {
        json!({"type": "cancelled", "reason": reason.unwrap_or("cancelled")})
    } else {
        airlock_core::execution_denied(reason.unwrap_or("denied by the user"))
    }
}

/// The audit row of a call the policy settled at once (allowed, denied, invalid): its action
/// and detail; `None` for a call that asks.
pub fn policy_audit(call: &NewCall) -> Option<(&'static str, Value)> {
    let action = match call.state {
        CallState::AutoAllowed => "auto_allowed",
        CallState::Denied => "auto_denied",
        CallState::Invalid => "invalid_call",
        _ => return None,
    };
    Some((
        action,
        json!({
            "server": call.server, "tool": call.tool, "args": call.args,
            "step": call.policy_step.map(Step::as_str), "why": call.policy_why,
        }),
    ))
}

/// The audit detail of a new inbox item; `origin` (another agent's) says who asked.
pub fn requested_detail(approval: &NewApproval, origin: Option<Value>) -> Value {
    let mut detail = json!({
        "server": approval.server, "tool": approval.tool, "args": approval.args,
        "why": approval.why,
    });
    if let Some(origin) = origin {
        detail["origin"] = origin;
    }
    detail
}

/// The audit detail of a decision: what was shown, what runs, and what it keeps.
pub fn decision_detail(
    input: &DecisionInput,
    row: &ApprovalRow,
    run_args: &Value,
    grant_id: Option<&str>,
) -> Value {
    let approve = input.approve();
    let grant = input.grant.as_ref().filter(|_| approve);
    json!({
        "server": row.server, "tool": row.tool,
        "args_shown": row.args, "args_run": approve.then_some(run_args),
        "edited": input.edited_args.is_some(), "reason": input.reason,
        "remember": input.remember.as_str(), "for_chat": input.for_chat,
        "device": input.device,
        "person": input.person,
        "grant": grant.map(|g| json!({
            "id": grant_id, "expires_at": g.expires_at, "uses": g.uses,
            "scope": if g.in_chat { "chat" } else { "all" },
            "exact_args": g.exact_args, "pattern": g.pattern, "covers": g.covers,
        })),
    })
}

/// The audit detail of a finished call: its result, and beside it a command's exit code and a
/// failure's message, where History shows them.
pub fn finished_detail(state: CallState, result: &Value) -> Value {
    let mut detail = json!({ "result": result });
    if let Some(code) = result.get("exit_code") {
        detail["exit_code"] = code.clone();
    }
    if state == CallState::Failed
        && let Some(message) = result.get("message")
    {
        detail["error"] = message.clone();
    }
    detail
}

/// Why a call approved before a failed commit never runs (`unconfirm_decision`).
pub const UNCONFIRMED: &str = "not run: the disk refused to record this approval when it was given, so it was never confirmed";

/// Whether a grant that lasts until `expires_at` has ended (an unreadable time has).
pub fn grant_has_ended(expires_at: &str) -> bool {
    airlock_core::policy::unix_seconds(expires_at)
        .is_none_or(|expires| expires <= airlock_core::policy::unix_now())
}

/// Names the top-level fields that differ between two definitions, e.g. "description changed".
pub fn what_changed(pinned: &Value, current: &Value) -> String {
    let mut keys: Vec<&String> = pinned
        .as_object()
        .into_iter()
        .flat_map(|o| o.keys())
        .chain(current.as_object().into_iter().flat_map(|o| o.keys()))
        .collect();
    keys.sort();
    keys.dedup();
    let changed: Vec<String> = keys
        .into_iter()
        .filter(|key| pinned.get(key.as_str()) != current.get(key.as_str()))
        .map(|key| key.replace('_', " "))
        .collect();
    if changed.is_empty() {
        "definition changed".into()
    } else {
        format!("{} changed", changed.join(", "))
    }
}

/// What a changed server definition suspends its tools' grants with.
pub const SERVER_DEFINITION_CHANGED: &str =
    "the server definition (command, arguments, environment or URL) changed";

/// The audit actions that record one call each (asked, or decided by the settings at once):
/// History's calls.
pub const CALL_ACTIONS: [&str; 5] = [
    "approval_requested",
    "auto_allowed",
    "auto_denied",
    "agent_allowed",
    "agent_denied",
];

/// Where another agent's call comes from, as its audit entry says.
pub fn agent_origin(origin: &crate::NewAgentRequest) -> Value {
    json!({
        "agent": origin.agent, "client": origin.client, "cwd": origin.cwd,
        "agent_session": origin.agent_session,
    })
}
