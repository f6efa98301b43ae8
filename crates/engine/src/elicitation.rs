//! Elicitation: a server asks the person for input during a call. The request
//! becomes an inbox item of kind `elicitation` in the session whose call is running, and waits
//! for `answer` (accept with content checked against the requested schema, decline, cancel).

use crate::decision::{Resolution, Settlement};
use crate::tools::CallContext;
use crate::{Engine, EngineError, Inner, Result};
use airlock_core::{ApprovalStatus, DecidedBy, ItemKind, args_hash, ids};
use airlock_protocol::{
    Decision, DecisionRequest, ElicitationAction, ElicitationAnswer, EngineEvent,
};
use airlock_store::NewApproval;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

/// One elicitation as a server sent it.
#[derive(Debug, Clone)]
pub struct ElicitationRequest {
    pub server: String,
    pub message: String,
    pub schema: Value,
    /// The request's `_meta` (e.g. `elicitationType: "tool_approval"`).
    pub meta: Option<Value>,
    /// The call that was running on that server, if any.
    pub context: Option<CallContext>,
    /// The names of the form's fields in the order the server sent them (a JSON object here
    /// keeps its keys sorted); empty when unknown.
    pub property_order: Vec<String>,
}

/// Cancels the inbox item when the server stops waiting for it (its request was cancelled or
/// the connection died), so that nothing is left to answer in vain; releases its hold under
/// this replica's lease (another replica cancels it if this one stops: `replicas`).
struct PendingGuard {
    inner: Arc<Inner>,
    approval_id: String,
}

impl Drop for PendingGuard {
    fn drop(&mut self) {
        self.inner.router.forget(&self.approval_id);
        if let Ok(Some(ApprovalStatus::Pending)) =
            self.inner.store.approval_status(&self.approval_id)
        {
            let cancel = Settlement::new(self.approval_id.clone(), Resolution::Cancel)
                .with_reason("the server stopped waiting");
            match self.inner.settle(vec![cancel], DecidedBy::Engine) {
                Ok(outcomes) => {
                    for error in outcomes.into_iter().filter_map(|o| o.err()) {
                        tracing::debug!(%error, "elicitation already settled");
                    }
                }
                Err(error) => tracing::warn!(%error, "cannot record the end of an elicitation"),
            }
        }
        self.inner
            .release(airlock_store::Work::Elicitation, &self.approval_id);
    }
}

impl Engine {
    /// Puts the request in the inbox and waits for the person's answer (or a cancel).
    pub async fn elicit(&self, request: ElicitationRequest) -> Result<ElicitationAnswer> {
        let inner = &self.inner;
        let session_id = match &request.context {
            Some(context) => context.session_id.clone(),
            None => {
                inner
                    .store
                    .ensure_session(&format!("{}-requests", request.server))?
                    .id
            }
        };
        let tool_approval = request
            .meta
            .as_ref()
            .and_then(|m| m.get("elicitationType"))
            .and_then(Value::as_str)
            == Some("tool_approval");
        let mut args = json!({
            "message": request.message,
            "schema": request.schema,
            "meta": request.meta,
            "elicitation_type": if tool_approval { "tool_approval" } else { "form" },
            "tool_call_id": request.context.as_ref().map(|c| c.tool_call_id.clone()),
        });
        if !request.property_order.is_empty() {
            args["property_order"] = json!(request.property_order);
        }
        let approval_id = ids::new_approval_id();
        let why = if tool_approval {
            format!("the server {} asks for approval", request.server)
        } else {
            format!("the server {} asks for input", request.server)
        };
        let mut receiver = inner.router.wait_for(&approval_id);
        // Held before it exists: a replica that stops in between leaves nothing unheld.
        inner.hold(airlock_store::Work::Elicitation, &approval_id);
        inner.store.insert_request(&NewApproval {
            approval_id: approval_id.clone(),
            tool_call_id: None,
            session_id,
            kind: ItemKind::Elicitation,
            server: request.server.clone(),
            tool: "elicitation".into(),
            args_hash: args_hash(&args),
            args,
            why,
            expires_at: None,
        })?;
        let _guard = PendingGuard {
            inner: inner.clone(),
            approval_id: approval_id.clone(),
        };
        if let Some(row) = inner.store.approval(&approval_id)? {
            inner.emit(EngineEvent::ApprovalRequested {
                item: Box::new(inner.inbox_item(row)),
            });
        }
        while let Some(ApprovalStatus::Pending) | None =
            inner.store.approval_status(&approval_id)?
        {
            // A cancelled turn settles the item in the store without a wake-up: look again now
            // and then.
            tokio::select! {
                _ = &mut receiver => receiver = inner.router.wait_for(&approval_id),
                _ = tokio::time::sleep(Duration::from_millis(500)) => {}
            }
        }
        let answer = match inner.store.decision(&approval_id)? {
            Some(decision) if decision.approve => ElicitationAnswer {
                action: ElicitationAction::Accept,
                content: decision.edited_args,
            },
            Some(decision) if decision.reason.as_deref() == Some("decline") => ElicitationAnswer {
                action: ElicitationAction::Decline,
                content: None,
            },
            _ => ElicitationAnswer::cancel(),
        };
        Ok(answer)
    }

    /// Answers an elicitation. Accepted content must be an object matching the requested
    /// schema (after its defaults are filled in); otherwise nothing changes.
    /// A decision of kind `answer` ([`Engine::decide`]).
    pub fn answer(
        &self,
        approval_id: &str,
        answer: ElicitationAnswer,
        by: DecidedBy,
    ) -> Result<()> {
        self.decide(
            DecisionRequest::new(approval_id, Decision::Answer(answer)),
            by,
        )
        .map(|_| ())
    }

    /// [`Engine::answer`] from a paired device (the phone inbox), audited with its name.
    pub fn answer_from_device(
        &self,
        approval_id: &str,
        answer: ElicitationAnswer,
        device: &str,
    ) -> Result<()> {
        self.decide_many_from_device(
            vec![DecisionRequest::new(approval_id, Decision::Answer(answer))],
            device,
        )?
        .pop()
        .unwrap_or_else(|| Err(EngineError::Invalid("no answer was recorded".into())))
        .map(|_| ())
    }
}
