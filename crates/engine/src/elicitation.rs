//! Elicitation: a server asks the person for input during a call. The request
//! becomes an inbox item of kind `elicitation` in the session whose call is running, and waits
//! for `answer` (accept with content checked against the requested schema, decline, cancel).

use crate::decision::{Resolution, Settlement};
use crate::tools::CallContext;
use crate::{Engine, EngineError, Inner, Result};
use airlock_core::schema::ArgsValidator;
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
/// the connection died), so that nothing is left to answer in vain.
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
    }
}

/// Fills in the defaults of the requested schema for fields the person left out.
pub(crate) fn with_defaults(schema: &Value, mut content: Value) -> Value {
    if let (Some(properties), Some(object)) = (
        schema.get("properties").and_then(Value::as_object),
        content.as_object_mut(),
    ) {
        for (name, property) in properties {
            if let Some(default) = property.get("default")
                && !object.contains_key(name)
            {
                object.insert(name.clone(), default.clone());
            }
        }
    }
    content
}

/// Checks an accepted answer against the requested form (after its defaults are filled in);
/// a refusal names each field at fault by its title, as the form showed it.
pub(crate) fn check_answer(schema: &Value, content: &Value) -> std::result::Result<(), String> {
    let validator = ArgsValidator::new(schema)
        .map_err(|error| format!("the server's form cannot be checked: {error}"))?;
    let faults: Vec<String> = validator
        .violations(content)
        .into_iter()
        .map(|violation| {
            let Some(field) = violation.field else {
                return violation.message;
            };
            let property = schema.get("properties").and_then(|p| p.get(&field));
            let title = property
                .and_then(|p| p.get("title"))
                .and_then(Value::as_str)
                .unwrap_or(&field);
            let named = if title == field {
                format!("\"{title}\"")
            } else {
                format!("\"{title}\" ({field})")
            };
            if violation.missing {
                format!("{named} is required")
            } else if property.is_none() {
                format!("{named} is not a field of the form")
            } else {
                format!("{named}: {}", violation.message)
            }
        })
        .collect();
    if faults.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the answer does not fit the form: {}",
            faults.join("; ")
        ))
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
        loop {
            match inner.store.approval_status(&approval_id)? {
                Some(ApprovalStatus::Pending) | None => {}
                Some(_) => break,
            }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn defaults_fill_missing_fields_only() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "x"}, "n": {"type": "integer", "default": 3}
        }});
        assert_eq!(
            with_defaults(&schema, json!({"name": "y"})),
            json!({"name": "y", "n": 3})
        );
    }

    /// server-everything's `trigger-elicitation-request` form (tests/mcp-servers); 3.14 is its
    /// default, not an approximation of pi.
    #[allow(clippy::approx_constant)]
    fn everything_form() -> Value {
        json!({"type": "object", "required": ["name"], "properties": {
            "name": {"title": "String", "type": "string"},
            "check": {"title": "Boolean", "type": "boolean"},
            "firstLine": {"title": "String with default", "type": "string", "default": "It was a dark and stormy night."},
            "email": {"title": "String with email format", "type": "string", "format": "email"},
            "homepage": {"type": "string", "format": "uri", "title": "String with uri format"},
            "birthdate": {"title": "String with date format", "type": "string", "format": "date"},
            "integer": {"title": "Integer", "type": "integer", "minimum": 1, "maximum": 100, "default": 42},
            "number": {"title": "Number in range 1-1000", "type": "number", "minimum": 0, "maximum": 1000, "default": 3.14},
            "untitledSingleSelectEnum": {"type": "string", "title": "Untitled Single Select Enum",
                "enum": ["Monica", "Rachel", "Joey", "Chandler", "Ross", "Phoebe"], "default": "Monica"},
            "untitledMultipleSelectEnum": {"type": "array", "title": "Untitled Multiple Select Enum", "minItems": 1, "maxItems": 3,
                "items": {"type": "string", "enum": ["Guitar", "Piano", "Violin", "Drums", "Bass"]}, "default": ["Guitar"]},
            "titledSingleSelectEnum": {"type": "string", "title": "Titled Single Select Enum",
                "oneOf": [{"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Green Lantern"}], "default": "hero-1"},
            "titledMultipleSelectEnum": {"type": "array", "title": "Titled Multiple Select Enum", "minItems": 1, "maxItems": 3,
                "items": {"anyOf": [{"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}]}, "default": ["fish-1"]},
            "legacyTitledEnum": {"type": "string", "title": "Legacy Titled Single Select Enum",
                "enum": ["pet-1", "pet-2"], "enumNames": ["Cats", "Dogs"], "default": "pet-1"}
        }})
    }

    #[test]
    #[allow(clippy::approx_constant)]
    fn the_forms_defaults_fit_the_form() {
        let form = everything_form();
        // What the window sends with only the required name typed (ElicitationForm.test.ts).
        let answer = json!({
            "name": "Ada", "check": false, "firstLine": "It was a dark and stormy night.",
            "integer": 42, "number": 3.14, "untitledSingleSelectEnum": "Monica",
            "untitledMultipleSelectEnum": ["Guitar"], "titledSingleSelectEnum": "hero-1",
            "titledMultipleSelectEnum": ["fish-1"], "legacyTitledEnum": "pet-1"
        });
        assert_eq!(check_answer(&form, &answer), Ok(()));
        // The name alone, the rest filled in from the defaults, fits as well.
        assert_eq!(
            check_answer(&form, &with_defaults(&form, json!({"name": "Ada"}))),
            Ok(())
        );
    }

    #[test]
    fn a_refused_answer_names_the_fields_by_their_titles() {
        let form = everything_form();
        let answer = with_defaults(
            &form,
            json!({"integer": 500, "titledMultipleSelectEnum": "fish-1", "untitledMultipleSelectEnum": []}),
        );
        let why = check_answer(&form, &answer).unwrap_err();
        assert!(
            why.starts_with("the answer does not fit the form: "),
            "{why}"
        );
        for part in [
            r#""String" (name) is required"#,
            r#""Integer" (integer): 500 is greater than the maximum of 100"#,
            r#""Titled Multiple Select Enum" (titledMultipleSelectEnum): "#,
            r#""Untitled Multiple Select Enum" (untitledMultipleSelectEnum): "#,
        ] {
            assert!(why.contains(part), "{part} missing from: {why}");
        }
        assert!(!why.contains("edited arguments"), "{why}");
    }
}
